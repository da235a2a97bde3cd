import { loadConfig } from '../config.js';
import { queueMoveTask } from '../modules/storage-tasks/service.js';
import { COMMON_FLAGS, out, parse, productionId, required, withDb, type Command } from './args.js';
import { userInfo } from 'node:os';

const task: Command = {
  name: 'task',
  summary: 'queue an approved file move for the storage agent',
  usage: `usage: prodgraph storage task --production CODE --from PATH --to PATH [--approved-by NAME] [--json]

Queues an admin-approved move for the storage agent (GET /api/v1/storage/tasks).

  --approved-by NAME   who approved the move (default: the operating-system user)
  --json               print {"id":N}

${COMMON_FLAGS}.`,
  async run(args) {
    const { values } = parse(args, {
      production: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      'approved-by': { type: 'string' },
      json: { type: 'boolean' },
    });
    const config = loadConfig(values);
    const code = required(values.production, '--production');
    const from = required(values.from, '--from');
    const to = required(values.to, '--to');
    const queued = await withDb(config, async (h) =>
      queueMoveTask(h.db, {
        productionId: await productionId(h, code),
        from,
        to,
        approvedBy: values['approved-by'] ?? userInfo().username,
      }),
    );
    out(values.json ? JSON.stringify(queued) : `queued move task ${queued.id}`);
  },
};

export const storageCommand: Command = {
  name: 'storage',
  summary: 'the storage agent’s task queue',
  usage: `usage: prodgraph storage task --production CODE --from PATH --to PATH [--approved-by NAME] [--json]`,
  subcommands: [task],
};
