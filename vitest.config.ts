import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  resolve: {
    alias: [
      { find: /^yoke\/testing$/, replacement: fileURLToPath(new URL('./src/testing/index.ts', import.meta.url)) },
      { find: /^yoke$/, replacement: fileURLToPath(new URL('./src/index.ts', import.meta.url)) },
    ],
  },
  test: {
    include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
    globals: false,
    testTimeout: 20_000,
    pool: 'forks',
    // Vitest's default on a 2-core machine is one worker (cpus - 1), and most of our tests wait on
    // fsync, child processes or sockets rather than the CPU: two workers halve the wall time.
    maxWorkers: 2,
    // The library has no module-level state (09-api.md X2), so test files share one module graph
    // per worker instead of re-importing all of src for each of ~160 files (~2 s apiece).
    isolate: false,
  },
})
