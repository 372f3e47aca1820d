import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/** Files that replace modules with vi.mock: each runs in a fresh module graph so its mocks reach no other file. */
const MOCKING = ['src/chat/chat-schema.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Most test files spend their time waiting (spawned gateways, providers' delays, PostgreSQL,
    // Redis), not computing: more files at once than cores (vitest's default is cores − 1, one
    // worker on a 2-core machine). Every file has its own databases, Redis prefixes and ports.
    maxWorkers: Math.max(4, availableParallelism()),
    reporters: ['default'],
    // npm test must leave the work tree as it found it (test/global-setup.ts).
    globalSetup: ['test/global-setup.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'gateway',
          include: ['test/**/*.test.ts', 'src/**/*.test.ts', 'emulators/**/*.test.ts'],
          exclude: MOCKING,
          // A worker keeps the modules it has evaluated for its next file: importing the gateway
          // (~2 s of CPU) once per worker rather than once per file. Tests share no state through
          // modules: each file starts its own gateways, stores, emulators and servers, and closes them.
          isolate: false,
        },
      },
      { extends: true, test: { name: 'mocking', include: MOCKING } },
    ],
  },
});
