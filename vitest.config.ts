import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts', 'emulators/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Most test files spend their time waiting (spawned gateways, providers' delays, PostgreSQL,
    // Redis), not computing: more files at once than cores (vitest's default is cores − 1, one
    // worker on a 2-core machine). Every file has its own databases, Redis prefixes and ports.
    maxWorkers: Math.max(4, availableParallelism()),
    reporters: ['default'],
  },
});
