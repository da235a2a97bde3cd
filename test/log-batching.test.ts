import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { LineBatcher } from '../src/http/logging.js';

/** A destination that records what it was handed. */
function recorder() {
  const events: string[] = [];
  return { events, out: { write: (chunk: string) => events.push(`write:${chunk}`) } };
}

test('log lines are written together once a batch is full, in the order they were logged', () => {
  const { events, out } = recorder();
  const batcher = new LineBatcher(out, 10);
  batcher.write('one\n');
  batcher.write('two\n');
  assert.deepEqual(events, [], 'nothing is written before the batch is full');
  batcher.write('three\n');
  assert.deepEqual(events, ['write:one\ntwo\nthree\n']);
  batcher.write('four\n');
  batcher.flush();
  batcher.flush();
  assert.deepEqual(events, ['write:one\ntwo\nthree\n', 'write:four\n'], 'a flush writes what waits, once');
});

test('a process that logs and exits at once loses no line', async () => {
  // the server's own standard output: batched, then flushed synchronously when the process exits
  const logging = new URL('../src/http/logging.js', import.meta.url).href;
  const script = `
    const { pino } = await import('pino');
    const { loggerOptions } = await import(${JSON.stringify(logging)});
    const { stream, ...options } = loggerOptions('info');
    const log = pino(options, stream);
    for (let n = 0; n < 20000; n++) log.info({ n }, 'line');
    process.exit(0);
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let text = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  const code = await new Promise((resolve) => child.on('close', resolve));
  assert.equal(code, 0);
  const numbers = text
    .trim()
    .split('\n')
    .map((line) => (JSON.parse(line) as { n: number }).n);
  assert.equal(numbers.length, 20000, 'every line arrives');
  assert.ok(
    numbers.every((n, i) => n === i),
    'in the order logged',
  );
});
