import type { ProductionDocument } from '../document/schema.js';

/** One element of a list section of the document. */
export type Item<K extends keyof ProductionDocument> =
  NonNullable<ProductionDocument[K]> extends Array<infer T> ? T : never;

/** What a generated document holds, counted while it is written (tests compare it to the database). */
export interface Tally {
  episodes: number;
  organisations: number;
  departments: number;
  people: number;
  scenes: number;
  assets: number;
  versions: number;
  releasedVersions: number;
  ingredients: number;
  usesEdges: number;
  wearsEdges: number;
  shootDays: number;
  strips: number;
  approvals: number;
  approvalSteps: number;
  departmentNotes: number;
  deliveries: number;
  engagements: number;
  grants: number;
  submissions: number;
  reviewedSubmissions: number;
  purchaseOrders: number;
  costReports: number;
  costReportLines: number;
  scriptChanges: number;
  activity: number;
  jobs: number;
  library: number;
}

export const emptyTally = (): Tally => ({
  episodes: 0,
  organisations: 0,
  departments: 0,
  people: 0,
  scenes: 0,
  assets: 0,
  versions: 0,
  releasedVersions: 0,
  ingredients: 0,
  usesEdges: 0,
  wearsEdges: 0,
  shootDays: 0,
  strips: 0,
  approvals: 0,
  approvalSteps: 0,
  departmentNotes: 0,
  deliveries: 0,
  engagements: 0,
  grants: 0,
  submissions: 0,
  reviewedSubmissions: 0,
  purchaseOrders: 0,
  costReports: 0,
  costReportLines: 0,
  scriptChanges: 0,
  activity: 0,
  jobs: 0,
  library: 0,
});
