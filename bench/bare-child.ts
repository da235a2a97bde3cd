import Fastify from 'fastify';

/**
 * The bare control: Fastify's hello-world and nothing else (no logger, no hooks, no plugins,
 * no database), the fastest answer this machine's Node and Fastify give. The bench measures it
 * with the same load generator, connections and pinning as the product, at the start and the
 * end of the run, and states every product figure as a ratio to it: what the product costs
 * beyond the HTTP stack itself. Talks over IPC like server-child.ts: "ready" with its port,
 * "stop" to close.
 */
const app = Fastify({ logger: false });
app.get('/hello', async () => ({ hello: 'world' }));
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
process.send?.({ type: 'ready', port: typeof address === 'object' && address ? address.port : 0 });
process.on('message', (message: { type: string }) => {
  if (message.type === 'stop') void app.close().finally(() => process.exit(0));
});
process.on('disconnect', () => void app.close().finally(() => process.exit(0)));
