#!/usr/bin/env node
/**
 * Runs the named npm scripts at the same time (npm test's static checks: the two type
 * checks, eslint and the layer rules are independent), prints each one's output in one
 * piece when it ends, and fails when any of them fails.
 * Usage: node scripts/run-parallel.mjs typecheck:gateway typecheck:dashboard lint layers
 */
import { spawn } from 'node:child_process';

const names = process.argv.slice(2);
const npm = process.env.npm_execpath;
const results = await Promise.all(
  names.map(
    (name) =>
      new Promise((resolve) => {
        const started = Date.now();
        // npm_execpath is npm's own CLI when run from an npm script; fall back to npm on PATH.
        const child = npm ? spawn(process.execPath, [npm, 'run', '--silent', name], { stdio: ['ignore', 'pipe', 'pipe'] }) : spawn('npm', ['run', '--silent', name], { stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        child.stdout.on('data', (d) => (out += d));
        child.stderr.on('data', (d) => (out += d));
        child.on('error', (error) => (out += String(error)));
        child.on('close', (code, signal) => {
          const ok = code === 0;
          process.stdout.write(`${ok ? '✓' : '✗'} npm run ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)${ok ? '' : `: exit ${code ?? signal}`}\n${out}`);
          resolve(ok);
        });
      }),
  ),
);
process.exit(results.every(Boolean) ? 0 : 1);
