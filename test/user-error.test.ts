import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KeyError } from '../src/auth/key-service.js';
import { BackupError } from '../src/backup/manifest.js';
import { CliError } from '../src/cli/args.js';
import { describeFailure } from '../src/cli/main.js';
import { portTaken } from '../src/cli/port.js';
import { ConfigError } from '../src/config.js';
import type { Db } from '../src/db/index.js';
import { DatabaseError } from '../src/db/index.js';
import { DocumentError } from '../src/document/parse.js';
import { AppError, ERROR_CODES, errors, UserError } from '../src/errors.js';
import { parseGenerateOptions } from '../src/generate/index.js';
import { SignInError } from '../src/modules/sign-in-admin/service.js';
import { queueMoveTask } from '../src/modules/storage-tasks/service.js';
import { prodgraph, prodgraphHere } from './support/cli.js';

/** The error `fn` throws (synchronously or not). */
async function thrown(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  assert.fail('expected a throw');
}

/** Every user-facing error the CLI and the API raise, as their own code raises them. */
const USER_ERRORS: [string, () => Promise<unknown>][] = [
  ['CliError', async () => new CliError('--db needs a value')],
  ['ConfigError', async () => new ConfigError('port: "eighty" is not a port number')],
  ['DocumentError', async () => new DocumentError('episodes[0].code: is required')],
  ['KeyError', async () => new KeyError('expires_at must be in the future')],
  ['SignInError', async () => new SignInError('"x" is not an email address')],
  ['DatabaseError', async () => new DatabaseError('cannot open the SQLite database /nowhere/x.db')],
  ['BackupError', async () => new BackupError('/tmp/b is not a prodgraph backup: no manifest.json')],
  ['AppError', async () => errors.invalid('scopes', 'unknown scope "admin"')],
  ['a port taken', async () => portTaken('127.0.0.1', 8080)],
  ['a generate option', () => thrown(() => parseGenerateOptions({ scale: 'lots' }))],
  [
    'a storage move',
    () =>
      thrown(() =>
        queueMoveTask(undefined as unknown as Db, {
          productionId: 1,
          from: 'a/b',
          to: 'a/b',
          approvedBy: 'x',
        }),
      ),
  ],
];

describe('the one user-facing error type', () => {
  for (const [name, make] of USER_ERRORS) {
    it(`${name} is a UserError: a catalogue code, its detail as its message, printed as it is`, async () => {
      const err = await make();
      assert.ok(err instanceof UserError, String(err));
      assert.ok(err.code in ERROR_CODES, err.code);
      assert.equal(err.detail, err.message);
      assert.ok(err.detail.length > 0);
      const printed = describeFailure(err);
      assert.equal(printed, err.detail);
      assert.doesNotMatch(printed, /\n|\bat \S+:\d+/);
    });
  }

  it('keeps each kind its own class name, and AppError its status and code', () => {
    assert.equal(new DocumentError('x').name, 'DocumentError');
    assert.equal(new CliError('x').name, 'CliError');
    const app = errors.conflict('already settled');
    assert.ok(app instanceof AppError);
    assert.equal(app.name, 'AppError');
    assert.deepEqual([app.status, app.code, app.detail], [409, 'conflict', 'already settled']);
  });

  it('still shows anything else by its first line only', () => {
    assert.equal(describeFailure(new Error('boom\n    at somewhere (x.ts:1:1)')), 'boom');
  });

  it('the CLI prints a refusal as one line, no stack, exit 1', async () => {
    const here = await prodgraphHere(['generate', '--scale', 'lots'], {});
    assert.equal(here.code, 1);
    assert.equal(here.stderr, 'prodgraph: --scale: "lots" is not a number greater than 0 and at most 10\n');
    const unknown = await prodgraphHere(['frobnicate'], {});
    assert.equal(unknown.stderr, 'prodgraph: unknown command "frobnicate" (see prodgraph --help)\n');
    // the real entry point, as a user runs it
    const real = await prodgraph(['generate', '--scale', 'lots'], {});
    assert.equal(real.code, 1);
    assert.equal(real.stderr, here.stderr);
  });
});
