/**
 * `examples/testing-with-scripted-model.test.ts` is itself a vitest
 * file: `npm test` runs it because vitest's `include` covers `examples/**\/*.test.ts`, and
 * `npm run typecheck` checks it because tsconfig.test.json includes `examples`. This checks that
 * wiring (the example's own assertions are its smoke check), using vitest's own file matching.
 */
import { readFile } from 'node:fs/promises'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, test } from 'vitest'
import { createVitest } from 'vitest/node'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

test('vitest collects the example test file with the repository config, and tsc checks examples/', async () => {
  const vitest = await createVitest('test', { root, watch: false, config: join(root, 'vitest.config.ts') }, {})
  try {
    const specifications = await vitest.globTestSpecifications()
    const files = specifications.map((specification) => relative(root, specification.moduleId).split('\\').join('/'))
    expect(files).toContain('examples/testing-with-scripted-model.test.ts')
    expect(files).toContain('test/examples/testing-with-scripted-model.test.ts')
  } finally {
    await vitest.close()
  }
  const tsconfig = JSON.parse(await readFile(join(root, 'tsconfig.test.json'), 'utf8')) as { include: string[] }
  expect(tsconfig.include).toContain('examples')
})
