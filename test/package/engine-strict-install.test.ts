/**
 * Yoke's `engines` field tells the truth about its dependencies: the packed tarball installs with
 * `npm install --engine-strict` on this machine's Node (the floor, 20, is what the project runs
 * on), which fails when any package in the tree requires a newer Node. The install is a real one,
 * the way a user's goes: npm resolves the dependencies and the peer (zod, named by the user as the
 * README says), from its cache when it can (`--prefer-offline`), else from the registry.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { type Outcome, runProcess } from '../helpers/child-process.js'
import { manifest, packYoke } from './pack-yoke.js'

let work = ''
let project = ''
let installed: Outcome | undefined

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'yoke-engines-'))
  const { tarball } = await packYoke(work)
  project = join(work, 'project')
  await mkdir(project)
  await writeFile(join(project, 'package.json'), `${JSON.stringify({ name: 'user', private: true, type: 'module' })}\n`)
  const zod = `zod@${manifest.devDependencies['zod'] ?? manifest.peerDependencies['zod']}`
  installed = await runProcess(
    'npm',
    ['install', '--engine-strict', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel', 'warn', tarball, zod],
    { cwd: project },
  )
}, 180_000)

afterAll(async () => {
  if (work !== '') await rm(work, { recursive: true, force: true })
})

test(`npm install --engine-strict of the tarball and its peer succeeds on Node ${process.versions.node}`, async () => {
  expect(manifest.peerDependencies['zod']).toBeDefined()
  expect(installed?.code, `${installed?.stdout}\n${installed?.stderr}`).toBe(0)
  expect(installed?.stderr).not.toMatch(/EBADENGINE|ERESOLVE/)
  // What was installed runs: both builds load.
  const script = `import('yoke').then((esm) => console.log(typeof esm.createHarness, typeof require('yoke').createHarness))`
  const loaded = await runProcess(process.execPath, ['-e', script], { cwd: project })
  expect(loaded).toEqual({ code: 0, stdout: 'function function\n', stderr: '' })
}, 60_000)
