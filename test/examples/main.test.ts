/**
 * The main job (`npm start` = examples/main.ts), run as a real
 * child process: bundled once with esbuild, `yoke` aliased to the source.
 */
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { cp, mkdtemp, rm, symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest'
import { type MockOpenAIServer, startMockOpenAIServer } from 'yoke/testing'
import { type Bundle, bundle, type Outcome, root, runProcess } from '../helpers/child-process.js'

let main: Bundle | undefined
const cleanups: (() => Promise<void>)[] = []

beforeAll(async () => {
  main = await bundle('examples/main.ts')
}, 30_000)

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

afterAll(async () => {
  await main?.remove()
})

function runMain(cwd: string, env: Readonly<Record<string, string>> = {}): Promise<Outcome> {
  if (main === undefined) throw new Error('the main job is not bundled yet')
  return main.run([], { cwd, env })
}

async function freshDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'yoke-main-'))
  cleanups.push(() => rm(dir, { recursive: true, force: true }))
  return dir
}

function lastLine(text: string): string {
  return text.trimEnd().split('\n').at(-1) ?? ''
}

/** The two lines the job prints before the transcript: the session, the turn and the log; the model. */
function header(text: string): readonly string[] {
  return text.split('\n').slice(0, 2)
}

const scripted = 'model: scripted (no network; set DEEPSEEK_API_KEY to use DeepSeek)'

test('the scripted main job answers, prints the tools, and a rerun resumes with turn 2', async () => {
  const cwd = await freshDir()
  const first = await runMain(cwd)
  expect(first.stderr).toBe('')
  expect(first.code).toBe(0)
  expect(header(first.stdout)).toEqual(['session readme-demo: new, turn 1 · log sessions/readme-demo.jsonl', scripted])
  expect(first.stdout).toContain('→ get_weather {"city":"Paris"}')
  expect(first.stdout).toContain('→ add {"a":2,"b":3}')
  expect(first.stdout).toContain('← Paris: sunny, 21 °C')
  expect(first.stdout).toContain('← 5')
  expect(first.stdout).toContain('Paris: sunny, 21 °C. 2 + 3 = 5.')
  expect(lastLine(first.stdout)).toBe('turn 1 completed · 2 steps · 2 tool calls · sessions/readme-demo.jsonl')
  const second = await runMain(cwd)
  expect(second.code).toBe(0)
  expect(header(second.stdout)).toEqual([
    'session readme-demo: resumed, turn 2 · log sessions/readme-demo.jsonl',
    scripted,
  ])
  expect(lastLine(second.stdout)).toBe('turn 2 completed · 2 steps · 2 tool calls · sessions/readme-demo.jsonl')
}, 30_000)

test('with DEEPSEEK_API_KEY and DEEPSEEK_BASE_URL it talks to that endpoint with the key', async () => {
  const server: MockOpenAIServer = await startMockOpenAIServer({
    script: [
      {
        toolCalls: [
          { id: 'w1', name: 'get_weather', arguments: { city: 'Paris' } },
          { id: 'a1', name: 'add', arguments: { a: 2, b: 3 } },
        ],
      },
      { text: 'Paris: sunny, 21 °C. 2 + 3 = 5.' },
    ],
  })
  cleanups.push(() => server.close())
  const cwd = await freshDir()
  const outcome = await runMain(cwd, { DEEPSEEK_API_KEY: 'k', DEEPSEEK_BASE_URL: server.baseURL })
  expect(outcome.stderr).toBe('')
  expect(outcome.code).toBe(0)
  expect(header(outcome.stdout)).toEqual([
    'session readme-demo: new, turn 1 · log sessions/readme-demo.jsonl',
    'model: DeepSeek deepseek-v4-flash',
  ])
  expect(outcome.stdout).toContain('Paris: sunny, 21 °C. 2 + 3 = 5.')
  expect(
    server.requests.map((request) => [
      request.method,
      request.path.endsWith('/chat/completions'),
      request.headers['authorization'],
    ]),
  ).toEqual([
    ['POST', true, 'Bearer k'],
    ['POST', true, 'Bearer k'],
  ])
  server.assertComplete()
}, 30_000)

test('a turn that does not complete prints its reason and code and exits 1', async () => {
  const server = await startMockOpenAIServer({ script: [{ fault: 'auth' }] })
  cleanups.push(() => server.close())
  const cwd = await freshDir()
  const outcome = await runMain(cwd, { DEEPSEEK_API_KEY: 'wrong', DEEPSEEK_BASE_URL: server.baseURL })
  expect(outcome.code).toBe(1)
  expect(lastLine(outcome.stdout)).toMatch(/^turn 1 error AUTH: /)
}, 30_000)

test('npm start in a copy of the tracked files (a fresh clone, node_modules linked, no dist), npm start runs the source without a build, answers, and a rerun resumes with turn 2', async () => {
  const clone = await freshDir()
  const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' })
    .split('\0')
    .filter((path) => path !== '')
  for (const path of tracked)
    await cp(join(root, path), join(clone, path), { recursive: true }).catch((error: NodeJS.ErrnoException) => {
      // A tracked file deleted in the working tree is not part of the clone.
      if (error.code !== 'ENOENT') throw error
    })
  await symlink(join(root, 'node_modules'), join(clone, 'node_modules'), 'dir')
  const first = await runProcess('npm', ['start', '--silent'], { cwd: clone })
  expect(first.code, first.stderr).toBe(0)
  expect(header(first.stdout)).toEqual(['session readme-demo: new, turn 1 · log sessions/readme-demo.jsonl', scripted])
  expect(first.stdout).toContain('→ get_weather {"city":"Paris"}')
  expect(first.stdout).toContain('Paris: sunny, 21 °C. 2 + 3 = 5.')
  expect(lastLine(first.stdout)).toBe('turn 1 completed · 2 steps · 2 tool calls · sessions/readme-demo.jsonl')
  const second = await runProcess('npm', ['start', '--silent'], { cwd: clone })
  expect(second.code, second.stderr).toBe(0)
  expect(header(second.stdout)[0]).toBe('session readme-demo: resumed, turn 2 · log sessions/readme-demo.jsonl')
  expect(lastLine(second.stdout)).toMatch(/^turn 2 completed · /)
  // Nothing was built: the copy has no dist/.
  expect(existsSync(join(clone, 'dist'))).toBe(false)
}, 120_000)
