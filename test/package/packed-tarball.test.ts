/**
 * The packed package, installed the way a user gets it: `npm pack` of the built `dist/`, unpacked into `node_modules/yoke` of a temp project
 * whose only other packages are Yoke's runtime dependencies and its peer zod (linked from this
 * repository), so no optional peer and no dev dependency can be resolved from there.
 *
 * `npm test` builds before vitest runs; run alone, this file builds first when `dist/` is missing.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type Outcome, root, runProcess } from '../helpers/child-process.js'
import { installUnpacked, manifest, packYoke, requiredPeers } from './pack-yoke.js'

/** Runs `command` in `cwd` (see {@link runProcess}). */
function run(command: string, args: readonly string[], cwd: string): Promise<Outcome> {
  return runProcess(command, args, { cwd })
}

/** What the project imports before the package: its runtime dependencies and its required peers. */
const dependencies = [...Object.keys(manifest.dependencies), ...requiredPeers]

let work = ''
let project = ''
let packed: readonly string[] = []

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'yoke-pack-'))
  const { tarball, files } = await packYoke(work)
  packed = files
  project = join(work, 'project')
  await installUnpacked(project, tarball, { name: 'consumer', private: true })
}, 120_000)

afterAll(async () => {
  if (work !== '') await rm(work, { recursive: true, force: true })
})

/**
 * A probe for import side effects (the package must have none): records what importing the package did to the process. `process.env` is
 * replaced by a proxy that records every key read from the package's own files (Node's module
 * loader reads a few, e.g. `NODE_V8_COVERAGE`); globals, process listeners and active handles
 * are compared before and after (after one macrotask, so a deferred timer would show). The runtime
 * dependencies are loaded before the first snapshot: zod 4 itself defines two globals
 * (`__zod_globalConfig`, `__zod_globalRegistry`) when imported, which is not Yoke's doing; so are
 * the stdio handles, which Node's own builtins (`node:http` loads its colour support) open lazily.
 */
const probeBody = `
await preload()
void process.stdout, process.stderr
const reads = []
const realEnv = process.env
process.env = new Proxy(realEnv, { get(target, key, receiver) { if (typeof key === 'string' && String(new Error().stack).includes('/node_modules/yoke/')) reads.push(key); return Reflect.get(target, key, receiver) } })
const globals = new Set(Reflect.ownKeys(globalThis).map(String))
const events = process.eventNames().map(String)
const resources = process.getActiveResourcesInfo()
await load()
await new Promise((resolve) => setImmediate(resolve))
process.env = realEnv
console.log(JSON.stringify({
  exports: Object.keys(loaded).length,
  envReads: reads,
  newGlobals: Reflect.ownKeys(globalThis).map(String).filter((key) => !globals.has(key)),
  newEvents: process.eventNames().map(String).filter((name) => !events.includes(name)),
  resourcesBefore: resources,
  resourcesAfter: process.getActiveResourcesInfo(),
}))
`

interface Probe {
  readonly exports: number
  readonly envReads: readonly string[]
  readonly newGlobals: readonly string[]
  readonly newEvents: readonly string[]
  readonly resourcesBefore: readonly string[]
  readonly resourcesAfter: readonly string[]
}

function expectNoEffect(probe: Probe): void {
  expect(probe.exports).toBeGreaterThan(100)
  expect(probe.envReads).toEqual([])
  expect(probe.newGlobals).toEqual([])
  expect(probe.newEvents).toEqual([])
  // Added handles only: an fs request of the module loader may still be pending at the first snapshot.
  const before = [...probe.resourcesBefore]
  const added = probe.resourcesAfter.filter((kind) => {
    const index = before.indexOf(kind)
    if (index === -1) return true
    before.splice(index, 1)
    return false
  })
  expect(added).toEqual([])
}

describe('the packed tarball', () => {
  test('holds the build, the manifest, README, LICENSE, CHANGELOG and the guides README links to, and no source or test file', async () => {
    expect(packed).toContain('package.json')
    expect(packed).toContain('README.md')
    expect(packed).toContain('LICENSE')
    expect(packed).toContain('CHANGELOG.md')
    expect(packed).toContain('dist/index.js')
    expect(packed).toContain('dist/index.cjs')
    expect(packed).toContain('dist/cli.js')
    // The guides in docs/ ship, so README's relative links work where the package is read
    // (the registry's page, node_modules); the generated API reference (docs/api/) does not.
    const guides = (await readdir(join(root, 'docs')))
      .filter((name) => name.endsWith('.md'))
      .map((name) => `docs/${name}`)
    expect(guides.length).toBeGreaterThan(0)
    expect(packed.filter((path) => path.startsWith('docs/')).sort()).toEqual(guides.sort())
    expect(
      packed.filter(
        (path) =>
          !path.startsWith('dist/') &&
          !path.startsWith('docs/') &&
          !['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md'].includes(path),
      ),
    ).toEqual([])
  })

  test('every relative link in README.md names a file the tarball holds', async () => {
    const readme = await readFile(join(root, 'README.md'), 'utf8')
    const targets = [...readme.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)]
      .map((match) => match[1] as string)
      .filter((target) => !/^[a-z]+:/i.test(target))
      .map((target) => target.replace(/^\.\//, ''))
    expect(targets.length).toBeGreaterThan(0)
    expect(
      targets.filter((target) => !packed.includes(target) && !packed.some((path) => path.startsWith(`${target}/`))),
    ).toEqual([])
  })

  test('every exports subpath has import and require, each with types first, then default, all packed', async () => {
    const installed = JSON.parse(await readFile(join(project, 'node_modules', 'yoke', 'package.json'), 'utf8')) as {
      readonly exports: Readonly<Record<string, string | Readonly<Record<string, Readonly<Record<string, string>>>>>>
    }
    const subpaths = Object.keys(installed.exports)
    expect(subpaths).toContain('.')
    expect(subpaths).toContain('./testing')
    expect(installed.exports['./package.json']).toBe('./package.json')
    for (const subpath of subpaths.filter((name) => name !== './package.json')) {
      const entry = installed.exports[subpath]
      expect(typeof entry, subpath).toBe('object')
      const conditions = entry as Readonly<Record<string, Readonly<Record<string, string>>>>
      expect(Object.keys(conditions), subpath).toEqual(['import', 'require'])
      for (const condition of ['import', 'require'] as const) {
        const target = conditions[condition] as Readonly<Record<string, string>>
        expect(Object.keys(target), `${subpath} ${condition}`).toEqual(['types', 'default'])
        for (const file of [target['types'], target['default']])
          expect(packed, `${subpath} ${condition}`).toContain((file as string).replace(/^\.\//, ''))
      }
      expect(conditions['import']?.['types']).toMatch(/\.d\.ts$/)
      expect(conditions['require']?.['types']).toMatch(/\.d\.cts$/)
    }
  })

  test('import("yoke") in a project without optional peers exits 0 and has no observable effect', async () => {
    const script = `let loaded\nconst load = async () => { loaded = await import('yoke'); await import('yoke/testing') }\nconst preload = async () => { for (const name of ${JSON.stringify(dependencies)}) await import(name) }\n${probeBody}`
    const outcome = await run(process.execPath, ['--input-type=module', '-e', script], project)
    expect(outcome.stderr).toBe('')
    expect(outcome.code).toBe(0)
    expectNoEffect(JSON.parse(outcome.stdout) as Probe)
  })

  test('require("yoke") exits 0 and has no observable effect', async () => {
    const script = `let loaded\nconst load = async () => { loaded = require('yoke'); require('yoke/testing') }\nconst preload = async () => { for (const name of ${JSON.stringify(dependencies)}) require(name) }\n;(async () => {${probeBody}})()`
    const outcome = await run(process.execPath, ['-e', script], project)
    expect(outcome.stderr).toBe('')
    expect(outcome.code).toBe(0)
    expectNoEffect(JSON.parse(outcome.stdout) as Probe)
  })

  test('an error from the CJS build satisfies is() of the ESM build and back', async () => {
    const script = `
import { createRequire } from 'node:module'
const cjs = createRequire(process.cwd() + '/package.json')('yoke')
const esm = await import('yoke')
const fromCjs = await cjs.createHarness({ tool: [] }).catch((error) => error)
const fromEsm = await esm.createHarness({ tool: [] }).catch((error) => error)
console.log(JSON.stringify({
  separateBuilds: cjs.InvalidOptionsError !== esm.InvalidOptionsError,
  code: fromCjs.code,
  esmIsCjs: [esm.InvalidOptionsError.is(fromCjs), esm.HarnessError.is(fromCjs), esm.ConfigError.is(fromCjs)],
  cjsIsEsm: [cjs.InvalidOptionsError.is(fromEsm), cjs.HarnessError.is(fromEsm), cjs.ConfigError.is(fromEsm)],
  unrelated: [esm.PluginStartError.is(fromCjs), cjs.PluginStartError.is(fromEsm)],
}))
`
    const outcome = await run(process.execPath, ['--input-type=module', '-e', script], project)
    expect(outcome.stderr).toBe('')
    expect(JSON.parse(outcome.stdout)).toEqual({
      separateBuilds: true,
      code: 'INVALID_OPTIONS',
      esmIsCjs: [true, true, true],
      cjsIsEsm: [true, true, true],
      unrelated: [false, false],
    })
  })

  test('the yoke/testing build imports no test runner', async () => {
    for (const file of ['testing.js', 'testing.cjs']) {
      const text = await readFile(join(project, 'node_modules', 'yoke', 'dist', file), 'utf8')
      expect(text, file).not.toMatch(/(from|import|require)\s*\(?\s*["'](vitest|jest|mocha|node:test)["']/)
    }
  })

  test('the installed bin runs: node_modules/.bin/yoke --version prints the version', async () => {
    const outcome = await run(join(project, 'node_modules', '.bin', 'yoke'), ['--version'], project)
    expect(outcome).toEqual({ code: 0, stdout: `${manifest.version}\n`, stderr: '' })
  })

  test('the installed bin runs the main job into a fresh directory (yoke demo)', async () => {
    const outcome = await run(join(project, 'node_modules', '.bin', 'yoke'), ['demo', '--dir', 't'], project)
    expect(outcome.stderr).toBe('')
    expect(outcome.code).toBe(0)
    expect(outcome.stdout).toContain('Paris: sunny, 21 °C. 2 + 3 = 5.')
    expect(await readdir(join(project, 't'))).toEqual(['readme-demo.jsonl'])
  })
})
