import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A 4 MiB tmpfs of the test's own, or null where mounting is not allowed (not root, not Linux). */
export async function smallDisk(): Promise<{ path: string; unmount(): Promise<void> } | null> {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return null;
  const path = await mkdtemp(join(tmpdir(), 'prodgraph-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m,mode=0700', 'tmpfs', path], { stdio: 'ignore' });
  } catch {
    await rm(path, { recursive: true, force: true });
    return null;
  }
  return {
    path,
    async unmount() {
      execFileSync('umount', [path], { stdio: 'ignore' });
      await rm(path, { recursive: true, force: true });
    },
  };
}
