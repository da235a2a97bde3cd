import { must, page, type Api } from './client';
import type { Delivery } from './types';

/*
 * The turnover's production side: organisations, a delivery's package, its status and the
 * review of what vendors submit on it.
 *
 * PENDING: these routes are being added to the server on other branches; until the client is
 * regenerated from a server that has them, the calls go through one loosely typed seam
 * (`loose`) and the shapes below are written from the routes' agreed bodies.
 */

export type DeliveryStatus = Delivery['status'];

export interface PackageFile {
  id: number;
  label: string;
  kind: string;
  content_type: string;
  size: number;
  sha256: string;
}

export interface Review {
  decision: 'accepted' | 'changes_requested';
  note: string;
  reviewed_by: string | null;
  reviewed_at: string;
}

export interface Submission {
  id: number;
  delivery_id: number;
  engagement_id: number | null;
  status: 'submitted' | 'accepted' | 'changes_requested';
  title: string;
  note: string;
  media: PackageFile[];
  created_at: string;
  review: Review | null;
}

/** A delivery as `GET /deliveries` lists it, with its package and every engagement's submissions. */
export type DeliveryWithWork = Delivery & { package?: PackageFile[]; submissions?: Submission[] };

interface Organisation {
  id: number;
  ref: string | null;
  name: string;
}

type LoosePost = (
  path: string,
  init: { params?: { path?: Record<string, number> }; body?: unknown },
) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

const loose = (api: Api) => (api.POST as unknown as LoosePost).bind(api);

export const createOrganisation = (api: Api, body: { name: string; ref?: string }) =>
  must(loose(api)('/api/v1/admin/organisations', { body })) as Promise<Organisation>;

export const setDeliveryStatus = (api: Api, id: number, body: { status: DeliveryStatus; note?: string }) =>
  must(
    loose(api)('/api/v1/admin/deliveries/{id}/status', { params: { path: { id } }, body }),
  ) as Promise<Delivery>;

export const removeDeliveryFile = (api: Api, id: number, mediaId: number) =>
  must(
    loose(api)('/api/v1/admin/deliveries/{id}/files/{media_id}/remove', {
      params: { path: { id, media_id: mediaId } },
    }),
  );

export const reviewSubmission = (
  api: Api,
  id: number,
  body: { decision: Review['decision']; note: string; accept_delivery?: boolean },
) =>
  must(
    loose(api)('/api/v1/admin/submissions/{id}/review', { params: { path: { id } }, body }),
  ) as Promise<Submission>;

/** Rows of the production's deliveries read a page at a time. */
const DELIVERY_PAGE = 200;

/**
 * One delivery, with its package and submissions, from the production's list: read a page at a
 * time until it is found (a production has tens of deliveries, rarely hundreds); null when
 * the production has no such delivery.
 */
export async function findDelivery(
  api: Api,
  id: number,
  signal: AbortSignal,
): Promise<DeliveryWithWork | null> {
  let cursor: string | undefined;
  for (;;) {
    const query = { limit: DELIVERY_PAGE, ...(cursor ? { cursor } : {}) };
    const got = await page(api.GET('/api/v1/deliveries', { params: { query }, signal }));
    const found = (got.rows as DeliveryWithWork[]).find((d) => d.id === id);
    if (found) return found;
    if (!got.next) return null;
    cursor = got.next;
  }
}
