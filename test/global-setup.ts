/**
 * `npm test` leaves the work tree as it found it: the tree is snapshotted before the run and
 * compared after it, and a run that changed a tracked file or left an untracked one fails
 * (exit code 1), listing them. Screenshots for the docs are written only when asked
 * (UPDATE_SCREENSHOTS=1), which this check then allows. In CI the clone is fresh, so the
 * tree must stay clean.
 */
import { fileURLToPath } from 'node:url';
import { treeChanges, treeSnapshot, type TreeSnapshot } from './helpers/tree-snapshot.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export default function setup(): () => void {
  let before: TreeSnapshot;
  try {
    before = treeSnapshot(ROOT);
  } catch (error) {
    // Not a git checkout (an unpacked archive): nothing to compare, except in CI, which always runs on a clone.
    if (process.env.CI !== undefined) throw error;
    return () => undefined;
  }
  return () => {
    const asked = process.env.UPDATE_SCREENSHOTS === '1' ? 'docs/screenshots/' : undefined;
    const changed = treeChanges(before, treeSnapshot(ROOT)).filter((path) => asked === undefined || !path.startsWith(asked));
    if (changed.length === 0) return;
    console.error(`\nnpm test changed the work tree (a test wrote into the repository):\n${changed.map((path) => `  ${path}`).join('\n')}\n`);
    process.exitCode = 1;
  };
}
