import { defineConfig } from 'vitest/config';

/** `npm run screenshots`: regenerates docs/publication-*.png and docs/console-*.png (not part of `npm test`). */
export default defineConfig({
  test: { globalSetup: ['test/browser/chromium.ts'], include: ['test/browser/screenshots.run.ts', 'test/browser/console-screenshots.run.ts'], testTimeout: 60_000, hookTimeout: 60_000 },
});
