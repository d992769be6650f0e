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
  },
})
