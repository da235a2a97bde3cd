import type { Schemas } from '@prodgraph/client';
import { must, page, type Api } from './client';
import type { Delivery } from './types';

/*
 * The turnover's production side: organisations, a delivery's package, its status and the
 * review of what vendors submit on it.
 */

export type DeliveryStatus = Delivery['status'];
export type PackageFile = Schemas['DeliveryFile'];
export type Review = Schemas['Review'];
export type Submission = Schemas['SubmissionRow'];

export const createOrganisation = (api: Api, body: Schemas['NewOrganisation']) =>
  must(api.POST('/api/v1/admin/organisations', { body }));

export const setDeliveryStatus = (api: Api, id: number, body: Schemas['DeliveryStatusChange']) =>
  must(api.POST('/api/v1/admin/deliveries/{id}/status', { params: { path: { id } }, body }));

export const removeDeliveryFile = (api: Api, id: number, mediaId: number) =>
  must(
    api.POST('/api/v1/admin/deliveries/{id}/files/{media_id}/remove', {
      params: { path: { id, media_id: mediaId } },
    }),
  );

export const reviewSubmission = (api: Api, id: number, body: Schemas['SubmissionReview']) =>
  must(api.POST('/api/v1/admin/submissions/{id}/review', { params: { path: { id } }, body }));

/** Rows of the production's deliveries read a page at a time. */
const DELIVERY_PAGE = 200;

/**
 * One delivery, with its package and newest submissions, from the production's list (there is
 * no route for one delivery): read a page at a time until it is found (a production has tens of
 * deliveries, rarely hundreds); null when the production has no such delivery.
 */
export async function findDelivery(api: Api, id: number, signal: AbortSignal): Promise<Delivery | null> {
  let cursor: string | undefined;
  for (;;) {
    const query = { limit: DELIVERY_PAGE, ...(cursor ? { cursor } : {}) };
    const got = await page(api.GET('/api/v1/deliveries', { params: { query }, signal }));
    const found = got.rows.find((d) => d.id === id);
    if (found) return found;
    if (!got.next) return null;
    cursor = got.next;
  }
}
