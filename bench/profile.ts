import { readFile } from 'node:fs/promises';

/**
 * Summarises a V8 CPU profile (`--cpu-prof`, or `npm run bench -- --cpu-prof`): where the
 * samples fell, by package or source folder and by function (self time).
 * Usage: node --import tsx bench/profile.ts FILE.cpuprofile…
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** node_modules/<package>, src/<folder>, node:internal, or V8's own pseudo-frames. */
function where(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const src = /\/(src|bench)\/(.+)$/.exec(url);
  if (src) return `${src[1]}/${src[2]!.split('/').slice(0, -1).join('/') || '.'}`;
  if (url.startsWith('node:')) return url.replace(/^node:internal\/([^/]+).*/, 'node:$1');
  return url;
}

export function summarise(profile: Profile, top = 25): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const total = [...self.values()].reduce((s, x) => s + x, 0);
  const groups = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const [id, us] of self) {
    const { callFrame: f } = byId.get(id)!;
    const group = where(f.url, f.functionName);
    groups.set(group, (groups.get(group) ?? 0) + us);
    const name = `${f.functionName || '(anonymous)'} ${f.url ? `${f.url.replace(/^.*\/(node_modules|src|bench)\//, '$1/')}:${f.lineNumber + 1}` : ''}`;
    functions.set(name, (functions.get(name) ?? 0) + us);
  }
  const pct = (us: number) => `${((100 * us) / total).toFixed(1)}%`;
  const table = (title: string, rows: Map<string, number>) => [
    `| ${title} | self | share |`,
    '|---|---:|---:|',
    ...[...rows]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, us]) => `| \`${k.trim()}\` | ${(us / 1000).toFixed(0)} ms | ${pct(us)} |`),
  ];
  return [
    `${(total / 1e6).toFixed(1)} s sampled`,
    '',
    ...table('package or folder', groups),
    '',
    ...table('function', functions),
    '',
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const files = process.argv.slice(2);
  if (files.length === 0) throw new Error('usage: profile.ts FILE.cpuprofile…');
  for (const file of files) {
    const profile = JSON.parse(await readFile(file, 'utf8')) as Profile;
    process.stdout.write(`## ${file}\n\n${summarise(profile)}\n`);
  }
}
