import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import type { ProductionDocument } from '../../src/document/schema.js';
import type { Scope } from '../../src/domain/vocabulary.js';
import type { TestEnv } from './env.js';
import { smallProduction } from './fixtures.js';
import { multipart, type FormEntry } from './multipart.js';

export const ALL_SCOPES: Scope[] = ['read', 'write', 'submit:turnover', 'read:money'];

export const png = (colour = '#c00', size = 8) =>
  sharp({ create: { width: size, height: size, channels: 3, background: colour } })
    .png()
    .toBuffer();

const grantsAll = (extra: Record<string, unknown>) => [
  { kind: 'scene', node: 'sc1', ...extra },
  { kind: 'character', node: 'ch-mara', ...extra },
  { kind: 'delivery', delivery: 'dl-plates', access: 'submit', ...extra },
  { kind: 'own_po', ...extra },
];

/**
 * The round-trip fixture: production `code` with six engagements that differ only in their
 * grants — live (eng-pix), another vendor's (eng-hal), read-only (eng-read), revoked
 * (eng-rev), expired (eng-exp) and none (eng-none) — and money rows of several vendors.
 * Writes the media files it references into `dir`.
 */
export async function roundTripDocument(code: string, dir: string): Promise<ProductionDocument> {
  await writeFile(join(dir, 'coat-v1.png'), await png('#123'));
  await writeFile(join(dir, 'wool.png'), await png('#456'));
  await writeFile(join(dir, 'cape-v1.png'), await png('#789'));
  await writeFile(join(dir, 'ward-v1.png'), await png('#abc'));
  const base = smallProduction(code);
  return {
    ...base,
    organisations: [
      { ref: 'org-pix', name: 'Pixelworks Ltd' },
      { ref: 'org-hal', name: 'Halide FX' },
      { ref: 'org-read', name: 'Readonly Post' },
      { ref: 'org-rev', name: 'Revoked Pictures' },
      { ref: 'org-exp', name: 'Expired Digital' },
      { ref: 'org-none', name: 'Nogrant Studio' },
    ],
    scenes: [
      {
        ref: 'sc1',
        number: '1',
        slugline: 'INT. WARD - NIGHT',
        synopsis: 'Mara arrives.',
        status: 'planned',
        revision_color: 'white',
        elements: { cast: ['Mara'] },
        assets: ['ch-mara', 'loc-ward'],
      },
      { ref: 'sc2', number: '2', slugline: 'EXT. ROOF - DAWN', status: 'omitted', assets: ['loc-ward'] },
      { ref: 'sc3', number: '3', slugline: 'INT. VAULT - DAY', status: 'active', assets: ['ch-jon'] },
    ],
    assets: [
      {
        ref: 'ch-mara',
        label: 'Mara',
        kind: 'character',
        department: 'costume',
        status: 'active',
        costumes: ['co-coat'],
      },
      {
        ref: 'co-coat',
        label: 'Mara coat',
        kind: 'costume',
        department: 'costume',
        status: 'active',
        versions: [
          {
            ref: 'v-coat-1',
            version: 1,
            variant: 'Main',
            status: 'approved',
            released: true,
            note: 'First look',
            media: 'coat-v1.png',
            created_by: 'p-ana',
            created_at: '2026-03-01T10:00:00Z',
            ingredients: [
              {
                ref: 'ing-wool',
                kind: 'fabric',
                label: 'Black wool',
                relation: 'primary',
                media: 'wool.png',
              },
              { ref: 'ing-btn', kind: 'trim', label: 'Horn buttons' },
            ],
          },
          { ref: 'v-coat-2', version: 2, variant: 'Main', status: 'wip', released: false },
          {
            ref: 'v-coat-3',
            version: 3,
            variant: 'Wet',
            status: 'approved',
            released: true,
            created_at: '2026-03-05T10:00:00Z',
            ingredients: [
              { kind: 'fabric', label: 'Black wool', relation: 'primary', media: 'wool.png' },
              { ref: 'ing-wax', kind: 'finish', label: 'Wax coat', relation: 'overlay' },
            ],
          },
        ],
      },
      {
        ref: 'loc-ward',
        label: 'Ward',
        kind: 'location',
        department: 'vfx',
        status: 'planned',
        versions: [
          { ref: 'v-ward-1', version: 1, status: 'approved', released: true, media: 'ward-v1.png' },
          { ref: 'v-ward-2', version: 2, status: 'wip', released: false },
        ],
      },
      {
        ref: 'ch-jon',
        label: 'Jon',
        kind: 'character',
        department: 'costume',
        status: 'planned',
        costumes: ['co-cape'],
      },
      {
        ref: 'co-cape',
        label: 'Jon cape',
        kind: 'costume',
        department: 'costume',
        status: 'planned',
        versions: [{ ref: 'v-cape-1', version: 1, status: 'approved', released: true, media: 'cape-v1.png' }],
      },
    ],
    shoot_days: [
      {
        ref: 'd1',
        day_number: 1,
        date: '2026-04-01',
        general_call: '07:00',
        status: 'scheduled',
        scenes: ['sc1'],
      },
      { ref: 'd2', day_number: 2, date: '2026-04-02', status: 'scheduled', scenes: ['sc2', 'sc1'] },
      { ref: 'd3', day_number: 3, date: '2026-04-03', status: 'scheduled', scenes: ['sc3'] },
    ],
    approvals: [
      {
        ref: 'ap-ward',
        title: 'Ward plates',
        mode: 'decision',
        status: 'pending',
        due: '2026-04-10',
        department: 'vfx',
        subject: { node: 'loc-ward' },
        steps: ['p-ben'],
      },
      {
        ref: 'ap-mara',
        title: 'Mara look',
        mode: 'chain',
        status: 'pending',
        department: 'costume',
        subject: { node: 'ch-mara' },
        steps: ['p-ana', 'p-ben'],
      },
      {
        ref: 'ap-jon',
        title: 'Jon look',
        mode: 'decision',
        status: 'pending',
        department: 'vfx',
        subject: { node: 'ch-jon' },
        steps: ['p-ben'],
      },
    ],
    department_notes: [
      {
        ref: 'n1',
        department: 'costume',
        node: 'sc1',
        summary: 'Coat must read wet',
        created_at: '2026-03-02T09:00:00Z',
      },
      { ref: 'n2', department: 'vfx', node: 'loc-ward', summary: 'Ward needs a set extension' },
      { ref: 'n3', department: null, node: 'sc1', summary: 'Production-wide note' },
      { ref: 'n4', department: 'vfx', node: 'sc3', summary: 'Vault is a full CG build' },
    ],
    deliveries: [
      ...base.deliveries!.map((d) => (d.gating_approval ? { ...d, gating_approval: 'ap-ward' } : d)),
      {
        ref: 'dl-other',
        title: 'Cape comps',
        kind: 'external',
        status: 'draft',
        due: '2026-06-01',
        external_to: 'Halide FX',
        spec: [{ format: 'MOV' }],
      },
    ],
    engagements: [
      {
        ref: 'eng-pix',
        organisation: 'org-pix',
        departments: ['vfx'],
        grants: [
          { kind: 'scene', node: 'sc1', expires_at: '2099-01-01T00:00:00Z' },
          { kind: 'character', node: 'ch-mara' },
          { kind: 'delivery', delivery: 'dl-plates', access: 'submit' },
          { kind: 'own_po' },
        ],
      },
      {
        ref: 'eng-hal',
        organisation: 'org-hal',
        departments: ['costume'],
        grants: [
          { kind: 'scene', node: 'sc3' },
          { kind: 'character', node: 'ch-jon' },
          { kind: 'delivery', delivery: 'dl-other', access: 'submit' },
          { kind: 'own_po' },
        ],
      },
      {
        ref: 'eng-read',
        organisation: 'org-read',
        departments: ['costume'],
        grants: [
          { kind: 'scene', node: 'sc1' },
          { kind: 'character', node: 'ch-mara' },
          { kind: 'delivery', delivery: 'dl-plates', access: 'read' },
        ],
      },
      {
        ref: 'eng-rev',
        organisation: 'org-rev',
        departments: ['vfx'],
        grants: grantsAll({ revoked: true }) as never,
      },
      {
        ref: 'eng-exp',
        organisation: 'org-exp',
        departments: ['vfx'],
        grants: grantsAll({ expires_at: '2020-01-01T00:00:00Z' }) as never,
      },
      { ref: 'eng-none', organisation: 'org-none', departments: ['vfx'], grants: [] },
    ],
    purchase_orders: [
      {
        ref: 'po1',
        vendor: 'org-pix',
        department: 'vfx',
        account: '4200',
        description: 'Plate cleanup',
        amount: 12500.5,
        status: 'open',
        date: '2026-03-02',
      },
      {
        ref: 'po2',
        vendor: 'org-pix',
        department: null,
        account: '9000',
        description: 'Insurance share',
        amount: 900,
        status: 'open',
        date: '2026-03-02',
      },
      {
        ref: 'po3',
        vendor: 'org-hal',
        department: 'costume',
        account: '2300',
        description: 'Cape build',
        amount: 4000,
        status: 'partial',
        date: '2026-03-03',
      },
      {
        ref: 'po4',
        vendor: 'org-pix',
        department: 'costume',
        account: '2300',
        description: 'Coat weathering',
        amount: 750,
        status: 'closed',
        date: '2026-03-01',
      },
      {
        ref: 'po5',
        vendor: 'org-rev',
        department: 'vfx',
        account: '4200',
        description: 'Roto',
        amount: 300,
        status: 'open',
        date: '2026-03-01',
      },
    ],
    cost_reports: [
      {
        week_of: '2026-02-23',
        active: false,
        lines: [{ account: '4200', description: 'VFX (old)', budget: 1, actual: 1, committed: 1 }],
      },
      {
        week_of: '2026-03-02',
        active: true,
        lines: [
          { account: '2300', description: 'Costume', budget: 80000, actual: 12000, committed: 4750 },
          { account: '4200', description: 'VFX', budget: 250000.25, actual: 41000, committed: 12500 },
          { account: '9000', description: 'Insurance', budget: 5000 },
        ],
      },
    ],
  };
}

export interface Refs {
  [ref: string]: number;
}

export async function importRoundTrip(env: TestEnv, code: string): Promise<Refs> {
  const result = await env.import(await roundTripDocument(code, env.dir), env.dir);
  return result.refs;
}

/** POST a submission through the app; returns the raw inject response. */
export function submit(
  env: TestEnv,
  token: string | undefined,
  deliveryId: number | string,
  entries: FormEntry[],
) {
  const { payload, headers } = multipart(entries);
  return env.app.inject({
    method: 'POST',
    url: `/api/v1/turnovers/${deliveryId}/submissions`,
    payload,
    headers: { ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}) },
  });
}
