import { defineConfig } from 'vitest/config';

/** `npm run screenshots`: regenerates docs/publication-*.png (not part of `npm test`). */
export default defineConfig({
  test: { include: ['test/browser/screenshots.run.ts'], testTimeout: 60_000, hookTimeout: 60_000 },
});
