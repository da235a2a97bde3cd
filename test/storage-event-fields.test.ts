import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normaliseByRules, normaliseLibraryPath } from '../src/modules/storage-library/paths.js';
import { utcTimestamp } from '../src/modules/storage-events/validation.js';
import { iso } from '../src/document/tables/row-context.js';
import { canonicalByRoundTrip } from './support/storage-event-rules.js';

/**
 * A storage event's path and timestamp are checked with shortcuts for what agents send most
 * (a path already in normal form, a timestamp already canonical). These tests hold the
 * shortcuts to the general rules (the path's `normaliseByRules`, the timestamp's round trip
 * through `Date`): any input, in or out of the common form, gets the same answer.
 */

/** Every string of up to `length` characters drawn from `alphabet`. */
function* strings(alphabet: string[], length: number): Generator<string> {
  if (length === 0) return yield '';
  for (const shorter of strings(alphabet, length - 1)) {
    yield shorter;
    if (shorter.length === length - 1) for (const c of alphabet) yield shorter + c;
  }
}

test('a library path: every short path of slashes, dots and letters is normalised or refused as by the general rules', () => {
  let checked = 0;
  for (const raw of new Set(strings(['a', 'b', '.', '/', '\\', 'C', ':', ' '], 6))) {
    if (raw === '') continue;
    // blank is refused before either rule is reached
    const expected =
      raw.trim() === '' ? { reason: 'path must be a non-empty string' } : normaliseByRules(raw);
    assert.deepEqual(normaliseLibraryPath(raw), expected, JSON.stringify(raw));
    checked++;
  }
  assert.ok(checked > 250_000, `${checked} paths checked`);
});

test('a library path: real paths keep or gain their normal form; over 4,096 characters is refused', () => {
  const cases: [string, string | null][] = [
    ['plates/sh010/v003/sh010.1001.exr', 'plates/sh010/v003/sh010.1001.exr'],
    ['plates\\sh010\\v003', 'plates/sh010/v003'],
    ['./plates//sh010/', 'plates/sh010'],
    ['plates/../etc', null],
    ['/etc/passwd', null],
    ['C:/show', null],
    ['...', '...'],
    ['a/.../b', 'a/.../b'],
    ['.hidden/file', '.hidden/file'],
    ['x'.repeat(4096), 'x'.repeat(4096)],
    ['x'.repeat(4097), null],
  ];
  for (const [raw, expected] of cases) {
    const got = normaliseLibraryPath(raw);
    assert.deepEqual(got, normaliseByRules(raw), raw);
    assert.equal('path' in got ? got.path : null, expected, raw);
  }
});

/** Every timestamp of these years and times on the edge days of the edge months (and some out of range). */
function* timestamps(
  years: string[],
  times: string[],
): Generator<{ date: string; time: string; raw: string }> {
  for (const y of years)
    for (const mo of ['00', '01', '02', '04', '12', '13'])
      for (const d of ['00', '01', '28', '29', '30', '31', '32'])
        for (const time of times) yield { date: `${y}-${mo}-${d}`, time, raw: `${y}-${mo}-${d}T${time}Z` };
}

test('a canonical timestamp is accepted exactly when it names a real instant', () => {
  const years = ['0000', '1900', '1999', '2000', '2024', '2026', '2100', '9999'];
  const times = ['00:00:00.000', '23:59:59.999', '24:00:00.000', '12:60:00.000', '12:00:60.000'];
  let checked = 0;
  for (const { raw } of timestamps(years, times)) {
    assert.equal(utcTimestamp(raw), canonicalByRoundTrip(raw), raw);
    checked++;
  }
  assert.equal(checked, 1680);
});

test('one without milliseconds (what documents hold) too, and the import reads it the same way', () => {
  const years = ['0000', '1900', '2000', '2024', '2026', '2100'];
  const times = ['00:00:00', '23:59:59', '24:00:00', '12:60:00', '12:00:60'];
  let real = 0;
  for (const { date, time, raw } of timestamps(years, times)) {
    const byDate = new Date(raw);
    const kept = !Number.isNaN(byDate.getTime()) && byDate.toISOString() === `${date}T${time}.000Z`;
    assert.equal(utcTimestamp(raw), kept ? byDate.toISOString() : null, raw);
    if (kept) assert.equal(iso(raw), byDate.toISOString(), raw);
    if (kept) real++;
  }
  // six years of 16 real dates each, February 29th in 0000, 2000 and 2024; two real times each
  assert.equal(real, (6 * 16 + 3) * 2);
});

test('other timestamps with a zone are read into UTC; without one, or impossible, refused', () => {
  assert.equal(utcTimestamp('2026-03-01T11:00:00Z'), '2026-03-01T11:00:00.000Z');
  assert.equal(utcTimestamp('2026-03-01T12:00:00.123456+01:00'), '2026-03-01T11:00:00.123Z');
  assert.equal(utcTimestamp('2024-02-29T00:00:00-0500'), '2024-02-29T05:00:00.000Z');
  assert.equal(utcTimestamp('2026-02-29T00:00:00Z'), null);
  assert.equal(utcTimestamp('2026-03-01T11:00:00'), null);
  assert.equal(utcTimestamp(' 2026-03-01T11:00:00.000Z '), '2026-03-01T11:00:00.000Z');
  assert.equal(utcTimestamp(1767225600000), null);
});
