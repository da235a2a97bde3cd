import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';

/*
 * docs/architecture.md ("Layers") draws the layer map; .dependency-cruiser.js holds the code to
 * it in `npm run lint`. This keeps the two the same map: the doc's table against the config's
 * layers and rules (judged on every file of src/, so a pattern that drifts from the doc shows),
 * the lint itself passing, and no import of a layer above anywhere in src/.
 */

// run from the suite's built tree, whose files link to the repository's: the repository itself
const ROOT = dirname(realpathSync(join(import.meta.dirname, '..', '.dependency-cruiser.js')));

interface Layer {
  name: string;
  paths: string[];
}
interface Rule {
  name: string;
  from: { path?: string[]; pathNot?: string[] };
  to: { path?: string[]; pathNot?: string[]; circular?: boolean };
}
interface Config {
  LAYERS: Layer[];
  default: { forbidden: Rule[] };
}

const config = (await import(pathToFileURL(join(ROOT, '.dependency-cruiser.js')).href)) as Config;

/** The doc's layers, top first: the rows of the table under "## Layers". */
function docLayers(): Layer[] {
  const page = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
  const section = page.split('\n## Layers\n')[1]?.split('\n## ')[0];
  assert.ok(section, 'docs/architecture.md has a "## Layers" section');
  const rows = section.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| Layer |'));
  return rows.map((row) => {
    const [name, folders] = row
      .split('|')
      .map((cell) => cell.trim())
      .slice(1);
    return { name: name!, paths: [...folders!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!) };
  });
}

/** Whether a doc path names a file: a folder and everything under it, or one file (`*` one name). */
function names(path: string, file: string): boolean {
  if (path.endsWith('/')) return file.startsWith(path);
  const a = path.split('/');
  const b = file.split('/');
  return (
    a.length === b.length &&
    a.every((part, i) => new RegExp(`^${part.replace(/\./g, '\\.').replace(/\*/g, '.+')}$`).test(b[i]!))
  );
}

const LAYERS = docLayers();
/** The doc's layer of a file: the highest that names it. */
const layerOf = (file: string): number =>
  LAYERS.findIndex((layer) => layer.paths.some((p) => names(p, file)));

const matches = (patterns: string[] | undefined, file: string) =>
  (patterns ?? []).some((p) => new RegExp(p).test(file));

function sourceFiles(dir = 'src'): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? sourceFiles(join(dir, e.name))
      : e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')
        ? [
            relative(ROOT, join(ROOT, dir, e.name))
              .split('\\')
              .join('/'),
          ]
        : [],
  );
}
const FILES = sourceFiles();

const rule = (name: string): Rule => {
  const found = config.default.forbidden.find((r) => r.name === name);
  assert.ok(found, `.dependency-cruiser.js has a rule ${name}`);
  return found;
};

describe('the layer map: docs/architecture.md and .dependency-cruiser.js', () => {
  it('the doc and the config list the same layers, top first, with the same folders', () => {
    assert.ok(LAYERS.length >= 2, 'the doc lists the layers');
    assert.deepEqual(
      config.LAYERS.map((l) => ({ name: l.name, paths: l.paths })),
      LAYERS,
    );
  });

  it('every file of src/ is in a layer of the map', () => {
    assert.deepEqual(
      FILES.filter((f) => layerOf(f) < 0),
      [],
    );
  });

  it("each layer's rule judges every file of src/ as the doc does: its own files, never an import of a layer above", () => {
    for (const [index, layer] of LAYERS.entries()) {
      if (index === 0) continue; // nothing is above the top
      const { from, to } = rule(`layer-${layer.name}`);
      for (const file of FILES) {
        const judged = matches(from.path, file) && !matches(from.pathNot, file);
        assert.equal(judged, layerOf(file) === index, `${file} under layer-${layer.name}`);
        assert.equal(matches(to.path, file), layerOf(file) < index, `${file} forbidden to ${layer.name}`);
      }
    }
  });

  it('every rule is a layer, no-circular or not-to-unresolvable', () => {
    assert.deepEqual(
      config.default.forbidden.map((r) => r.name),
      [...LAYERS.slice(1).map((l) => `layer-${l.name}`), 'no-circular', 'not-to-unresolvable'],
    );
    assert.equal(rule('no-circular').to.circular, true);
  });

  it('depcruise passes on src/, and no file imports a layer above its own', () => {
    const bin = join(ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
    const out = execFileSync(
      process.execPath,
      [bin, 'src', '--config', '.dependency-cruiser.js', '--output-type', 'json'],
      { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    );
    const result = JSON.parse(out) as {
      modules: { source: string; dependencies: { resolved: string }[] }[];
      summary: { violations: unknown[]; error: number };
    };
    assert.deepEqual(result.summary.violations, []);
    assert.ok(result.modules.length > 100, 'src/ was cruised');

    // every import of a layer above, as the doc's map sees it
    const upward: { from: string; to: string }[] = [];
    for (const m of result.modules) {
      if (!m.source.startsWith('src/')) continue;
      for (const d of m.dependencies) {
        if (d.resolved.startsWith('src/') && layerOf(d.resolved) < layerOf(m.source))
          upward.push({ from: m.source, to: d.resolved });
      }
    }
    assert.deepEqual(upward, [], 'no upward import');
  });
});
