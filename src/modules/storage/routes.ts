import type { FastifyInstance } from 'fastify';
import { storageEventRoutes } from './events-routes.js';
import { mediaProxyRoutes } from './media-proxy-routes.js';
import { storageTaskRoutes } from './task-feed-routes.js';

/** The storage agent's wire: events, proxy images, move tasks. */
export async function storageRoutes(app: FastifyInstance): Promise<void> {
  await app.register(storageEventRoutes);
  await app.register(mediaProxyRoutes);
  await app.register(storageTaskRoutes);
}
