/**
 * `yoke/postgres` installed without its optional peer `pg`: importing the subpath works (nothing
 * is loaded until the factory runs) and `postgresPersistence()` throws `MissingPeerError` naming
 * `pg`, the subpath and the install command, from the ESM build and the CJS build alike.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { runProcess } from '../helpers/child-process.js'
import { installUnpacked, packYoke } from './pack-yoke.js'

let work = ''
let project = ''

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'yoke-pg-peer-'))
  const { tarball } = await packYoke(work)
  project = join(work, 'project')
  await installUnpacked(project, tarball, { name: 'consumer', private: true })
}, 120_000)

afterAll(async () => {
  if (work !== '') await rm(work, { recursive: true, force: true })
})

/** What the probe prints: the error's class checks and fields. */
const report = `(error) => JSON.stringify({
  missing: yoke.MissingPeerError.is(error),
  code: error.code,
  peer: error.peer,
  subpath: error.subpath,
  install: error.install,
  message: error.message,
})`

const expected = {
  missing: true,
  code: 'MISSING_PEER',
  peer: 'pg',
  subpath: 'yoke/postgres',
  install: 'npm install pg',
  message: 'yoke/postgres needs the optional peer "pg"; install it with: npm install pg',
}

describe('yoke/postgres without pg installed', () => {
  test('ESM: the import succeeds and postgresPersistence() throws MissingPeerError naming pg', async () => {
    const script = `
const yoke = await import('yoke')
const { postgresPersistence } = await import('yoke/postgres')
try { postgresPersistence({ connectionString: 'postgresql://app@127.0.0.1/app' }); console.log('no error') }
catch (error) { console.log((${report})(error)) }
`
    const outcome = await runProcess(process.execPath, ['--input-type=module', '-e', script], { cwd: project })
    expect(outcome.stderr).toBe('')
    expect(JSON.parse(outcome.stdout)).toEqual(expected)
  })

  test('CJS: the require succeeds and postgresPersistence() throws MissingPeerError naming pg', async () => {
    const script = `
const yoke = require('yoke')
const { postgresPersistence } = require('yoke/postgres')
try { postgresPersistence({ connectionString: 'postgresql://app@127.0.0.1/app' }); console.log('no error') }
catch (error) { console.log((${report})(error)) }
`
    const outcome = await runProcess(process.execPath, ['-e', script], { cwd: project })
    expect(outcome.stderr).toBe('')
    expect(JSON.parse(outcome.stdout)).toEqual(expected)
  })

  test('bad options are reported before the missing peer', async () => {
    const script = `
const yoke = require('yoke')
const { postgresPersistence } = require('yoke/postgres')
try { postgresPersistence({ schema: 'x' }) } catch (error) { console.log(error.code, yoke.InvalidOptionsError.is(error)) }
`
    const outcome = await runProcess(process.execPath, ['-e', script], { cwd: project })
    expect(outcome.stderr).toBe('')
    expect(outcome.stdout.trim()).toBe('INVALID_OPTIONS true')
  })
})
