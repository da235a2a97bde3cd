import assert from 'node:assert/strict';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { HAPROXY_CONFIG, haproxyBinary } from './support/balancer.js';

/*
 * docs/operations.md ("Several servers") shows deploy/haproxy.cfg and deploy/prodgraph.service
 * as they are: the balancer test (test/balancer/) runs that very HAProxy configuration, so what
 * the page shows is what was tested.
 */
const ROOT = join(import.meta.dirname, '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

describe('deploy files and docs/operations.md', () => {
  it('the page shows deploy/haproxy.cfg and deploy/prodgraph.service word for word', () => {
    const page = read('docs/operations.md');
    for (const [file, fence] of [
      ['deploy/haproxy.cfg', 'haproxy'],
      ['deploy/prodgraph.service', 'ini'],
    ] as const) {
      assert.ok(
        page.includes(`\`\`\`${fence}\n${read(file)}\`\`\``),
        `${file} as it is, in a ${fence} block`,
      );
    }
  });

  it('HAProxy accepts the configuration (haproxy -c), with its defaults and with addresses given', () => {
    const binary = haproxyBinary();
    if (!binary) {
      // CI installs it (.ci/steps/10-install.sh); elsewhere the check needs Debian's package
      assert.notEqual(process.env.CI, 'true', 'haproxy is missing');
      return;
    }
    for (const env of [
      {},
      {
        PRODGRAPH_LISTEN: '127.0.0.1:18080',
        PRODGRAPH_SERVER_1: '127.0.0.1:18081',
        PRODGRAPH_HAPROXY_SOCKET: '/tmp/x.sock',
      },
    ]) {
      const r: SpawnSyncReturns<string> = spawnSync(binary, ['-c', '-f', HAPROXY_CONFIG], {
        env: { ...process.env, ...env },
        encoding: 'utf8',
      });
      assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
    }
  });
});
