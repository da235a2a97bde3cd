/**
 * @prodgraph/client: the prodgraph API, typed from the server's own OpenAPI document.
 * See README.md for the first hour's tasks.
 */
export { createClient, serializeBody, type ClientOptions, type ProdgraphClient } from './client.js';
export { DEFAULT_TIMEOUT_MS, retryAfterMs, retryingFetch, TimeoutError, type RetryOptions } from './retry.js';
export { ApiError, type ErrorBody } from './errors.js';
export { paginate, pages, nextCursor } from './paginate.js';
export { conditionalGet, type Conditional, type ConditionalCache, type Kept } from './conditional.js';
export { followChanges, type Change, type ChangeFollower, type FollowOptions } from './changes.js';
export { verifyWebhook, type VerifyOptions } from './webhook.js';
export {
  addDeliveryFiles,
  addOrganisation,
  removeDeliveryFile,
  reviewSubmission,
  setDeliveryStatus,
  type Delivery,
  type DeliveryFile,
  type DeliveryPackage,
  type DeliveryStatus,
  type Organisation,
  type PackageFile,
  type PackageUpload,
  type Review,
  type SubmissionReview,
  type SubmissionRow,
  type TurnoverRow,
  type UploadOptions,
  type UploadProgress,
  type WriteOptions,
} from './turnover-admin.js';
export type { GetInit, GetPath, OkBody, PagedPath, RowOf } from './types.js';
export type { components, operations, paths } from './openapi.js';

import type { components } from './openapi.js';
/** Every named schema of the API: `Schemas['SceneBundle']`, `Schemas['ErrorBody']`, … */
export type Schemas = components['schemas'];
