import { readFileSync } from 'node:fs'
import { expect, test } from 'vitest'
import { YOKE_VERSION } from '../src/version.js'

test('YOKE_VERSION equals the version in package.json', () => {
  const packageJson: unknown = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  expect(
    typeof packageJson === 'object' && packageJson !== null
      ? (packageJson as { version?: unknown }).version
      : undefined,
  ).toBe(YOKE_VERSION)
})
