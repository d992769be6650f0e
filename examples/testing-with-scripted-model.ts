/**
 * `npm run example -- testing-with-scripted-model`: runs the example test file
 * `examples/testing-with-scripted-model.test.ts` with vitest (the repository's config, so `yoke`
 * resolves to the source). Read that file: it is the example. Extra arguments go to vitest.
 */
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const testFile = fileURLToPath(new URL('./testing-with-scripted-model.test.ts', import.meta.url))
const root = fileURLToPath(new URL('..', import.meta.url))
const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url))
const result = spawnSync(process.execPath, [vitest, 'run', testFile, ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
})
process.exit(result.status ?? 1)
