import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { principalOf } from '../../auth/route-hook.js';
import { errorResponses } from '../../http/schemas.js';
import { DepartmentDetail, DepartmentParams, DepartmentRow } from './schemas.js';
import { getDepartment, listDepartments } from './service.js';
import { routesOf } from '../../http/define-route.js';

const read = { auth: { scopes: ['read'], surface: 'production' } } as const;

export async function departmentRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  routesOf(app).get(
    '/departments',
    {
      config: read,
      schema: {
        operationId: 'listDepartments',
        summary: 'Every department of the production, in the order the production lists them',
        tags: ['departments'],
        response: { 200: Type.Array(DepartmentRow) },
      },
    },
    async (request) => listDepartments(app.ctx, principalOf(request)),
  );
  routesOf(app).get(
    '/departments/:slug',
    {
      config: read,
      schema: {
        operationId: 'getDepartment',
        summary: 'One department with its people and asset count',
        tags: ['departments'],
        params: DepartmentParams,
        response: { 200: DepartmentDetail, ...errorResponses(404, 422) },
      },
    },
    async (request) => getDepartment(app.ctx, principalOf(request), request.params.slug),
  );
}
