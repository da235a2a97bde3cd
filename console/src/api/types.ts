import type { OkBody, RowOf, Schemas, paths } from '@prodgraph/client';

/* The console's names for the API's shapes, all from @prodgraph/client (the OpenAPI document). */

type Created<P extends keyof paths> = paths[P] extends {
  post: { responses: { 201: { content: { 'application/json': infer T } } } };
}
  ? T
  : never;

export type CallerKey = Schemas['CallerKey'];
export type ConsoleSession = Schemas['ConsoleSession'];
export type AllowedPerson = Schemas['AllowedPerson'];
export type SessionSummary = Schemas['SessionSummary'];
export type Production = OkBody<'/api/v1/production'>;
export type Activity = RowOf<'/api/v1/activity'>;
export type SceneBundle = Schemas['SceneBundle'];
export type CharacterBundle = Schemas['CharacterBundle'];
export type Version = SceneBundle['assets'][number]['released_versions'][number];
export type BundleEntry = Schemas['BundleEntry'];
export type Delivery = Schemas['Delivery'];
export type Asset = Schemas['AssetRecord'];
export type Turnover = RowOf<'/api/v1/turnovers'>;
export type SubmissionRow = RowOf<'/api/v1/submissions'>;
export type PurchaseOrders = Schemas['PurchaseOrders'];
export type VendorView = Schemas['VendorView'];
export type Engagement = Schemas['AdminEngagement'];
export type Grant = Schemas['AdminGrant'];
export type GrantTarget = Schemas['AdminGrantTarget'];
export type ApiKey = Schemas['AdminKey'];
export type MintedKey = Created<'/api/v1/admin/keys'>;
export type NewGrant = Schemas['NewGrant'];
export type Webhook = Schemas['Webhook'];
export type CreatedWebhook = Created<'/api/v1/admin/webhooks'>;
export type WebhookDelivery = Schemas['WebhookDelivery'];
export type Scope = CallerKey['scopes'][number];
export type AuditEvent = Schemas['AuditEvent'];
