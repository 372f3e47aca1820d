/**
 * What `git status` shows of a work tree, with each listed file's content hash: two snapshots
 * taken before and after `npm test` must be equal, whatever the tree held before (a developer's
 * own changes included). A test that rewrites a tracked file, or leaves an untracked one, shows.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Path → git status code and content hash ('-' for a removed file or a folder). */
export type TreeSnapshot = Map<string, string>;

export function treeSnapshot(root: string): TreeSnapshot {
  const out = execFileSync('git', ['status', '--porcelain=v1', '-z', '--untracked-files=all'], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const snapshot: TreeSnapshot = new Map();
  const entries = out.split('\0');
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i] as string;
    if (entry === '') continue;
    const status = entry.slice(0, 2);
    const path = entry.slice(3);
    // A rename lists its old path next.
    if (status.startsWith('R') || status.startsWith('C')) i++;
    snapshot.set(path, `${status} ${hashOf(join(root, path))}`);
  }
  return snapshot;
}

function hashOf(path: string): string {
  if (!existsSync(path) || statSync(path).isDirectory()) return '-';
  return createHash('sha1').update(readFileSync(path)).digest('hex');
}

/** The paths whose state differs between two snapshots. */
export function treeChanges(before: TreeSnapshot, after: TreeSnapshot): string[] {
  const paths = new Set([...before.keys(), ...after.keys()]);
  return [...paths].filter((path) => before.get(path) !== after.get(path)).sort();
}
