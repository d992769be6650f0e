import { fileURLToPath } from 'node:url'
import { BaseSequencer, type TestSpecification } from 'vitest/node'
import { defineConfig } from 'vitest/config'

/**
 * The files that take longest (real child processes, compilers, fsync per step), started first so that a
 * clean clone, which has no timing cache to order by, does not end with one of them running alone.
 */
const slowFirst = [
  'test/package/consumer-types.test.ts',
  'test/persistence/crash/crash.test.ts',
  'test/examples/main.test.ts',
  'test/persistence/conformance-jsonl.test.ts',
  'test/persistence/jsonl-persistence.test.ts',
  'test/harness/per-id-state.test.ts',
  'test/cli/session-errors.test.ts',
  'test/package/packed-tarball.test.ts',
  'test/package/engine-strict-install.test.ts',
  'test/cli/demo.test.ts',
]

class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files)
    const rank = (spec: TestSpecification): number => {
      const index = slowFirst.findIndex((path) => spec.moduleId.endsWith(path))
      return index === -1 ? slowFirst.length : index
    }
    return sorted
      .map((spec, order) => ({ spec, order }))
      .sort((a, b) => rank(a.spec) - rank(b.spec) || a.order - b.order)
      .map(({ spec }) => spec)
  }
}

export default defineConfig({
  resolve: {
    alias: [
      { find: /^yoke\/testing$/, replacement: fileURLToPath(new URL('./src/testing/index.ts', import.meta.url)) },
      { find: /^yoke\/ai-sdk$/, replacement: fileURLToPath(new URL('./src/ai-sdk/index.ts', import.meta.url)) },
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
    // The library has no module-level state, so test files share one module graph
    // per worker instead of re-importing all of src for each of ~160 files (~2 s apiece).
    isolate: false,
    sequence: { sequencer: SlowFirstSequencer },
    // One PostgreSQL server for the whole run (YOKE_TEST_POSTGRES_URL, or a throwaway cluster when
    // PostgreSQL is installed here), handed to the test files; see test/helpers/postgres.ts.
    globalSetup: ['test/helpers/postgres-global-setup.ts'],
  },
})
