import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { JsonSyntaxError, SectionScanner } from '../src/document/load/json-sections.js';

/*
 * The scanner that reads a document's two outer levels from a stream is checked against
 * JSON.parse itself: whatever the document and wherever its chunks are cut, it hands over what
 * JSON.parse reads from the whole text, and it refuses exactly what JSON.parse refuses.
 */

/** The object rebuilt from what the scanner hands over, reading `text` in chunks cut at `cuts`. */
function scanned(text: string, cuts: number[] = []): Record<string, unknown> {
  const bytes = Buffer.from(text);
  const scanner = new SectionScanner();
  const doc: Record<string, unknown> = {};
  let from = 0;
  for (const to of [...cuts, bytes.length]) {
    scanner.write(bytes.subarray(from, to));
    from = to;
    for (const e of scanner.out.splice(0)) {
      if (e.kind === 'value') doc[e.key] = e.value;
      else if (e.kind === 'list') doc[e.key] = [];
      else {
        const list = doc[e.key] as unknown[];
        assert.equal(e.i, list.length);
        list.push(e.value);
      }
    }
  }
  scanner.end();
  return doc;
}

const SAMPLE = JSON.stringify(
  {
    production: { code: 'x', title: 'Ünïcödé \u2603 "quoted" \\ back', budget: -1.5e3 },
    scenes: [
      { ref: 'sc-1', tags: ['a', 'b]', '{c'], nested: { deep: [[1], [2, [3]]] } },
      'a string element with \\" an escaped quote',
      42,
      true,
      null,
      [],
      {},
    ],
    empty: [],
    flag: false,
    n: 0.25,
  },
  null,
  1,
);

describe('reading the outer levels of a JSON document from a stream', () => {
  it('hands over what JSON.parse reads, wherever the chunks are cut', () => {
    const whole = JSON.parse(SAMPLE);
    const length = Buffer.byteLength(SAMPLE);
    assert.deepEqual(scanned(SAMPLE), whole);
    for (let cut = 1; cut < length; cut++) assert.deepEqual(scanned(SAMPLE, [cut]), whole, `cut at ${cut}`);
    const everyByte = Array.from({ length: length - 1 }, (_, i) => i + 1);
    assert.deepEqual(scanned(SAMPLE, everyByte), whole);
  });

  it('refuses exactly what JSON.parse refuses: every byte dropped, doubled or replaced', () => {
    const text = JSON.stringify({ production: { a: 'b"c' }, scenes: [{ x: [1, 2] }, 3, 'z'], e: [] });
    const variants = new Set<string>();
    for (let i = 0; i < text.length; i++) {
      variants.add(text.slice(0, i) + text.slice(i + 1));
      variants.add(text.slice(0, i) + text[i] + text.slice(i));
      for (const c of [',', ']', '}', '"', ':', '[', '{', ' ', '\\', '1']) {
        variants.add(text.slice(0, i) + c + text.slice(i + 1));
      }
    }
    variants.add(text + ' x');
    variants.add('');
    variants.add('[]');
    let refused = 0;
    for (const v of variants) {
      let expected: unknown;
      try {
        expected = JSON.parse(v);
      } catch {
        expected = undefined;
      }
      const isObject = expected !== null && typeof expected === 'object' && !Array.isArray(expected);
      if (isObject) {
        for (const cut of [0, 7, 19]) assert.deepEqual(scanned(v, cut ? [cut] : []), expected, v);
      } else {
        assert.throws(() => scanned(v), JsonSyntaxError, v);
        refused++;
      }
    }
    assert.ok(refused > 400, `${refused} refused of ${variants.size}`);
  });

  it('says at which byte the document breaks', () => {
    const text = '{"production": {"code": "x"}, "scenes": [{"ref": "a",,}]}';
    assert.throws(() => scanned(text), /^JsonSyntaxError: in the value at byte 41: /);
    assert.throws(() => scanned('{"a": [1,]}'), /^JsonSyntaxError: at byte 9: expected a value$/);
    assert.throws(() => scanned('{"a": [1] "b": 2}'), /at byte 10: expected "," or "}" after a value$/);
    assert.throws(() => scanned('{"a": [1'), /the document ends before its closing "}"$/);
  });
});
