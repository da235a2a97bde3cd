import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ENVIRONMENT } from '../src/config.js';

/**
 * The README's configuration table is the operators' view of ENVIRONMENT (src/config.ts): the
 * same variables, each once, with the same defaults and, where a row states a range, the same
 * limits.
 */

interface Row {
  name: string;
  /** The default cell for this variable (a cell naming two variables states one default each, or one for both). */
  stated: string;
  meaning: string;
}

function tableRows(): Row[] {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const section = readme.slice(readme.indexOf('\n## Configuration\n'));
  const table = section.slice(section.indexOf('\n| flag |')).split('\n\n')[0]!;
  const rows: Row[] = [];
  for (const line of table.trim().split('\n').slice(2)) {
    const [, , env = '', stated = '', ...meaning] = line.split('|').map((c) => c.trim());
    const names = [...env.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]!);
    const defaults = stated.split(' / ');
    assert.ok(names.length > 0, `a row without a variable: ${line}`);
    names.forEach((name, i) =>
      rows.push({
        name,
        stated: defaults.length === names.length ? defaults[i]! : stated,
        meaning: meaning.join('|'),
      }),
    );
  }
  return rows;
}

type Property = { default?: unknown; minimum?: number; maximum?: number; anyOf?: Property[] };
const property = (name: string) => (ENVIRONMENT.properties as unknown as Record<string, Property>)[name]!;

/** The value a default cell states: `value` or a number (with any gloss after it); null: none. */
function statedValue(cell: string): string | null {
  const code = /^`([^`]*)`$/.exec(cell);
  if (code) return code[1]!;
  const number = /^(\d+)(?: \(.*\))?$/.exec(cell);
  return number ? number[1]! : null;
}

describe('README configuration table', () => {
  const rows = tableRows();

  it('lists exactly the variables of the environment schema, each once', () => {
    const listed = rows.map((r) => r.name);
    assert.deepEqual(
      listed.filter((n, i) => listed.indexOf(n) !== i),
      [],
      'listed twice',
    );
    assert.deepEqual([...listed].sort(), Object.keys(ENVIRONMENT.properties).sort());
  });

  it("states the schema's defaults (a variable without one reads none, off, any or a sentence)", () => {
    for (const { name, stated } of rows) {
      const declared = property(name).default;
      const value = statedValue(stated);
      if (value === null) {
        assert.equal(declared, undefined, `${name}: the README states no value ("${stated}")`);
      } else {
        assert.equal(String(declared), value, `${name}: the README says ${stated}`);
      }
    }
  });

  it("states the schema's limits where it gives a range", () => {
    let checked = 0;
    for (const { name, meaning } of rows) {
      const range = /\((\d+)–(\d+)[;)]/.exec(meaning);
      if (!range) continue;
      const schema = property(name);
      const integer = schema.anyOf?.find((b) => b.minimum !== undefined) ?? schema;
      assert.deepEqual(
        [integer.minimum, integer.maximum],
        [Number(range[1]), Number(range[2])],
        `${name}: the README says ${range[0]}`,
      );
      checked++;
    }
    assert.ok(checked >= 10, `only ${checked} ranges found`);
  });
});
