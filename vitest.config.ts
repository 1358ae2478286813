import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';

const pkg = (name: string): string => fileURLToPath(new URL(`./packages/${name}/src/index.ts`, import.meta.url));

// Unit tests import workspace packages from source; end-to-end tests (test/) spawn the built binary,
// which is why `npm test` builds first.
export default defineConfig({
  resolve: {
    alias: {
      '@flotilla/protocol': pkg('protocol'),
      '@flotilla/raft': pkg('raft'),
      '@flotilla/store': pkg('store'),
      '@flotilla/jetstream': pkg('jetstream'),
      '@flotilla/cluster': pkg('cluster'),
    },
  },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
