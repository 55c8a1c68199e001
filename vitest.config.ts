import { defineConfig } from 'vitest/config';

// Two groups: the suite, files in parallel; then `*.alone.test.ts`, one file at a time with
// nothing else of the suite running (tests that measure latency under load). The globalSetup finds
// the Chromium of the browser tests once for the run (CHROMIUM_PATH, system, npm package).
export default defineConfig({
  test: {
    globalSetup: ['test/browser/chromium.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    projects: [
      {
        extends: true,
        test: { name: 'suite', include: ['src/**/*.test.ts', 'test/**/*.test.ts'], exclude: ['**/node_modules/**', '**/*.alone.test.ts'], sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: { name: 'alone', include: ['test/**/*.alone.test.ts'], fileParallelism: false, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
