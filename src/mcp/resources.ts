import type { Principal } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { allApprovals } from '../modules/approvals/service.js';
import { listDepartments } from '../modules/departments/service.js';
import { getProduction } from '../modules/production/service.js';
import { allScenes } from '../modules/scenes/service.js';
import { listSchedule } from '../modules/schedule/service.js';
import { allTurnovers } from '../modules/turnovers/service.js';

export interface ResourceSpec {
  uri: string;
  name: string;
  title: string;
  description: string;
  /** The REST route whose answer this is (its auth applies, word for word). */
  rest: string;
  run(ctx: AppContext, principal: Principal): Promise<unknown>;
}

/** Six JSON documents an agent may attach as context; each is its REST route's body. */
export const RESOURCES: readonly ResourceSpec[] = [
  {
    uri: 'prodgraph://production',
    name: 'production',
    title: 'Production overview',
    description: 'The production with its live counts (GET /api/v1/production).',
    rest: 'GET /production',
    run: (ctx, p) => getProduction(ctx, p),
  },
  {
    uri: 'prodgraph://departments',
    name: 'departments',
    title: 'Departments',
    description: 'Every department with its mission and key roles (GET /api/v1/departments).',
    rest: 'GET /departments',
    run: (ctx, p) => listDepartments(ctx, p),
  },
  {
    uri: 'prodgraph://scenes',
    name: 'scenes',
    title: 'Scenes',
    description: 'Every scene in script order with its breakdown elements (GET /api/v1/scenes).',
    rest: 'GET /scenes',
    run: (ctx, p) => allScenes(ctx, p),
  },
  {
    uri: 'prodgraph://schedule',
    name: 'schedule',
    title: 'Shooting schedule',
    description: 'Every shoot day with its scene strips (GET /api/v1/schedule).',
    rest: 'GET /schedule',
    run: (ctx, p) => listSchedule(ctx, p),
  },
  {
    uri: 'prodgraph://approvals',
    name: 'approvals',
    title: 'Approvals',
    description: 'Every approval chain with its steps (GET /api/v1/approvals).',
    rest: 'GET /approvals',
    run: (ctx, p) => allApprovals(ctx, p),
  },
  {
    uri: 'prodgraph://turnovers',
    name: 'turnovers',
    title: 'Turnovers (vendor)',
    description:
      'The deliveries this vendor engagement may read or submit to (GET /api/v1/turnovers); empty for a production-wide key.',
    rest: 'GET /turnovers',
    run: (ctx, p) => allTurnovers(ctx, p),
  },
];
