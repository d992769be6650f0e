/**
 * The optional-peer subpaths installed without their peers (one packed tarball, installed once
 * with neither better-sqlite3, pg nor the MCP SDK): importing `yoke/sqlite`, `yoke/postgres` and
 * `yoke/mcp` works, since nothing is loaded until a factory runs, and each factory throws `MissingPeerError` naming
 * the peer, the subpath and the install command, from the ESM and the CJS build alike, before
 * anything is opened. Bad options are still reported first.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { runProcess } from '../helpers/child-process.js'
import { installUnpacked, packYoke } from './pack-yoke.js'

let work = ''
let project = ''

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'yoke-missing-peers-'))
  const { tarball } = await packYoke(work)
  project = join(work, 'project')
  await installUnpacked(project, tarball, { name: 'consumer', private: true })
}, 120_000)

afterAll(async () => {
  if (work !== '') await rm(work, { recursive: true, force: true })
})

/** Runs `call` in a script of the given build and prints what it threw, as JSON. */
async function probe(file: string, load: string, call: string): Promise<unknown> {
  await writeFile(
    join(project, file),
    `${load}
try {
  ${call}
  console.log(JSON.stringify({ threw: false }))
} catch (error) {
  console.log(JSON.stringify({ threw: true, name: error.name, code: error.code, peer: error.peer, subpath: error.subpath, install: error.install, message: error.message }))
}
`,
  )
  const outcome = await runProcess(process.execPath, [file], { cwd: project })
  expect(outcome.stderr).toBe('')
  expect(outcome.code).toBe(0)
  return JSON.parse(outcome.stdout)
}

const builds = [
  ['ESM', 'mjs', (name: string, subpath: string) => `import { ${name} } from '${subpath}'`],
  ['CJS', 'cjs', (name: string, subpath: string) => `const { ${name} } = require('${subpath}')`],
] as const

describe.each(builds)('the %s build', (_build, extension, load) => {
  test('without better-sqlite3, sqlitePersistence() throws MissingPeerError and opens nothing', async () => {
    const database = join(project, `probe-${extension}.db`)
    const thrown = await probe(
      `sqlite.${extension}`,
      load('sqlitePersistence', 'yoke/sqlite'),
      `sqlitePersistence({ path: ${JSON.stringify(database)} })`,
    )
    expect(thrown).toEqual({
      threw: true,
      name: 'MissingPeerError',
      code: 'MISSING_PEER',
      peer: 'better-sqlite3',
      subpath: 'yoke/sqlite',
      install: 'npm install better-sqlite3@12',
      message: 'yoke/sqlite needs the optional peer "better-sqlite3"; install it with: npm install better-sqlite3@12',
    })
    expect(existsSync(database)).toBe(false)
  })

  test('without pg, postgresPersistence() throws MissingPeerError naming pg', async () => {
    const thrown = await probe(
      `postgres.${extension}`,
      load('postgresPersistence', 'yoke/postgres'),
      "postgresPersistence({ connectionString: 'postgresql://app@127.0.0.1/app' })",
    )
    expect(thrown).toEqual({
      threw: true,
      name: 'MissingPeerError',
      code: 'MISSING_PEER',
      peer: 'pg',
      subpath: 'yoke/postgres',
      install: 'npm install pg',
      message: 'yoke/postgres needs the optional peer "pg"; install it with: npm install pg',
    })
  })

  test('without @modelcontextprotocol/sdk, a stdio mcpServer() throws MissingPeerError naming it', async () => {
    const thrown = await probe(
      `mcp.${extension}`,
      load('mcpServer', 'yoke/mcp'),
      "mcpServer({ name: 'files', command: 'mcp-files' })",
    )
    expect(thrown).toEqual({
      threw: true,
      name: 'MissingPeerError',
      code: 'MISSING_PEER',
      peer: '@modelcontextprotocol/sdk',
      subpath: 'yoke/mcp',
      install: 'npm install @modelcontextprotocol/sdk',
      message:
        'yoke/mcp needs the optional peer "@modelcontextprotocol/sdk"; install it with: npm install @modelcontextprotocol/sdk',
    })
  })

  test('without @modelcontextprotocol/sdk, a URL mcpServer() throws MissingPeerError; an injected client needs no peer', async () => {
    const url = await probe(
      `mcp-url.${extension}`,
      load('mcpServer', 'yoke/mcp'),
      "mcpServer({ name: 'remote', url: 'http://127.0.0.1:1/mcp' })",
    )
    expect(url).toMatchObject({ threw: true, name: 'MissingPeerError', peer: '@modelcontextprotocol/sdk' })
    const injected = await probe(
      `mcp-client.${extension}`,
      load('mcpServer', 'yoke/mcp'),
      "mcpServer({ name: 'mine', client: { listTools() {}, callTool() {}, close() {} } })",
    )
    expect(injected).toEqual({ threw: false })
  })

  test('bad options are reported before the missing peer', async () => {
    const sqlite = await probe(
      `bad-sqlite.${extension}`,
      load('sqlitePersistence', 'yoke/sqlite'),
      'sqlitePersistence({})',
    )
    const postgres = await probe(
      `bad-postgres.${extension}`,
      load('postgresPersistence', 'yoke/postgres'),
      "postgresPersistence({ schema: 'x' })",
    )
    for (const thrown of [sqlite, postgres]) {
      expect(thrown).toMatchObject({ threw: true, name: 'InvalidOptionsError', code: 'INVALID_OPTIONS' })
    }
  })
})
