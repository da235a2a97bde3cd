import { execFileSync, spawnSync } from 'node:child_process';

/** One sample of a Prometheus text exposition. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples and the declared metric families of a text exposition (enough for tests). */
export function parseExposition(text: string): { samples: Sample[]; families: Map<string, string> } {
  const samples: Sample[] = [];
  const families = new Map<string, string>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) families.set(type[1]!, type[2]!);
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1]!] = l[2]!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return { samples, families };
}

/** The value of the one sample with this name whose labels include `labels`, or undefined. */
export function valueOf(
  samples: Sample[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    ?.value;
}

/** Prometheus's own `promtool` (Debian package prometheus), or null when it is not installed. */
export function promtool(): string | null {
  try {
    return execFileSync('sh', ['-c', 'command -v promtool'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

/** `promtool check metrics` of a text exposition: its complaints (empty: none) and exit status. */
export function promtoolCheck(tool: string, text: string): { status: number | null; output: string } {
  const r = spawnSync(tool, ['check', 'metrics'], { input: text, encoding: 'utf8' });
  return { status: r.status, output: `${r.stdout}${r.stderr}`.trim() };
}
