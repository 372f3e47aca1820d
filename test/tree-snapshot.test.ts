/** The check that `npm test` leaves the work tree as it found it (test/global-setup.ts), on a repository of its own. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { treeChanges, treeSnapshot } from './helpers/tree-snapshot.ts';

let repo: string;
const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, stdio: 'ignore' });
beforeAll(() => {
  repo = mkdtempSync(join(tmpdir(), 'gw-tree-'));
  git('init', '-q');
  writeFileSync(join(repo, 'shot.png'), 'first');
  writeFileSync(join(repo, 'notes.md'), 'mine');
  writeFileSync(join(repo, '.gitignore'), 'ignored/\n');
  git('add', '.');
  git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'start');
});
afterAll(() => rmSync(repo, { recursive: true, force: true }));

describe('the work-tree check', () => {
  it('a clean tree, or one holding the developer\'s own changes, left as it was: no change reported', () => {
    expect(treeChanges(treeSnapshot(repo), treeSnapshot(repo))).toEqual([]);
    writeFileSync(join(repo, 'notes.md'), 'edited by the developer');
    expect(treeChanges(treeSnapshot(repo), treeSnapshot(repo))).toEqual([]);
  });

  it('a tracked file rewritten, a dirty file rewritten again, a new untracked file: each reported; an ignored one not', () => {
    const before = treeSnapshot(repo);
    writeFileSync(join(repo, 'shot.png'), 'second');
    writeFileSync(join(repo, 'notes.md'), 'edited again by a test');
    writeFileSync(join(repo, 'left-behind.db'), 'x');
    execFileSync('mkdir', ['-p', join(repo, 'ignored')]);
    writeFileSync(join(repo, 'ignored', 'cache'), 'x');
    expect(treeChanges(before, treeSnapshot(repo))).toEqual(['left-behind.db', 'notes.md', 'shot.png']);
  });
});
