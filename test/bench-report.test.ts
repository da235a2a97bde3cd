import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { uncommittedCode } from '../bench/report.js';

/** The commit line of a bench result says which code was measured, beyond the commit itself. */
describe('bench results: the uncommitted code a run measured', () => {
  it('leaves out the bench’s own earlier results, which change no code', () => {
    assert.equal(uncommittedCode(' M bench/results/sqlite.md\n M bench/results/postgres.md\n'), '');
    assert.equal(uncommittedCode(''), '');
  });

  it('names the changed files, the first five and how many more', () => {
    assert.equal(
      uncommittedCode(' M bench/results/sqlite.md\n M src/http/logging.ts\n?? src/new.ts\n'),
      'src/http/logging.ts, src/new.ts',
    );
    const many = Array.from({ length: 7 }, (_, i) => ` M src/f${i}.ts`).join('\n');
    assert.equal(uncommittedCode(many), 'src/f0.ts, src/f1.ts, src/f2.ts, src/f3.ts, src/f4.ts and 2 more');
  });
});
