/**
 * `yoke/sqlite` installed without its optional peer: `sqlitePersistence()` throws
 * `MissingPeerError` naming better-sqlite3 and its install command, from the ESM and the CJS
 * build alike, before anything is opened (no database file appears).
 */
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { runProcess } from '../helpers/child-process.js'
import { installUnpacked, packYoke } from './pack-yoke.js'

let work = ''
let project = ''

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'yoke-sqlite-peer-'))
  const { tarball } = await packYoke(work)
  project = join(work, 'project')
  await installUnpacked(project, tarball, { name: 'consumer', private: true })
}, 120_000)

afterAll(async () => {
  if (work !== '') await rm(work, { recursive: true, force: true })
})

/** Prints what `sqlitePersistence({ path })` threw, as JSON. */
const probe = (path: string) => `
try {
  sqlitePersistence({ path: ${JSON.stringify(path)} })
  console.log(JSON.stringify({ threw: false }))
} catch (error) {
  console.log(JSON.stringify({ threw: true, name: error.name, code: error.code, peer: error.peer, subpath: error.subpath, install: error.install, message: error.message }))
}
`

test.each([
  ['ESM', 'probe.mjs', "import { sqlitePersistence } from 'yoke/sqlite'\n"],
  ['CJS', 'probe.cjs', "const { sqlitePersistence } = require('yoke/sqlite')\n"],
])(
  'without better-sqlite3, sqlitePersistence() from the %s build throws MissingPeerError and opens nothing',
  async (_build, file, load) => {
    const database = join(project, `${file}.db`)
    await writeFile(join(project, file), load + probe(database))
    const outcome = await runProcess(process.execPath, [file], { cwd: project })
    expect(outcome.stderr).toBe('')
    expect(outcome.code).toBe(0)
    expect(JSON.parse(outcome.stdout)).toEqual({
      threw: true,
      name: 'MissingPeerError',
      code: 'MISSING_PEER',
      peer: 'better-sqlite3',
      subpath: 'yoke/sqlite',
      install: 'npm install better-sqlite3@12',
      message: expect.stringContaining('npm install better-sqlite3@12'),
    })
    expect(existsSync(database)).toBe(false)
  },
)
