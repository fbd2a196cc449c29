import { defineConfig } from 'vitest/config';

// Tests run against the TypeScript sources; workspace packages resolve to their
// built output (npm test builds first), except where aliased here.
export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
