/**
 * `yoke demo`: the main job into a fresh directory, and the same
 * transcript as `examples/main.ts`, which shows the job written against the public API, so the
 * two cannot drift.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startMockOpenAIServer } from 'yoke/testing'
import { type Bundle, bundle, runNode, useCli } from './cli-process.js'

const { yoke, yokeWith, freshDir } = useCli()
let example: Bundle

beforeAll(async () => {
  example = await bundle('examples/main.ts')
}, 30_000)

afterAll(async () => {
  await example.remove()
})

function lastLine(text: string): string {
  return text.trimEnd().split('\n').at(-1) ?? ''
}

describe('yoke demo', () => {
  test('"yoke demo --dir t" answers into a fresh t; a rerun is turn 2', async () => {
    const cwd = await freshDir()
    const first = await yoke(cwd, 'demo', '--dir', 't')
    expect(first.stderr).toBe('')
    expect(first.code).toBe(0)
    expect(first.stdout).toBe(
      [
        'session readme-demo: new, turn 1 · log t/readme-demo.jsonl',
        'model: scripted (no network; set DEEPSEEK_API_KEY to use DeepSeek)',
        '→ get_weather {"city":"Paris"}',
        '← Paris: sunny, 21 °C',
        '→ add {"a":2,"b":3}',
        '← 5',
        'Paris: sunny, 21 °C. 2 + 3 = 5.',
        'turn 1 completed · 2 steps · 2 tool calls · t/readme-demo.jsonl',
        '',
      ].join('\n'),
    )
    expect(
      (await readFile(join(cwd, 't', 'readme-demo.jsonl'), 'utf8')).startsWith(
        '{"type":"session","version":1,"id":"readme-demo"',
      ),
    ).toBe(true)
    const second = await yoke(cwd, 'demo', '--dir', 't')
    expect(second.code).toBe(0)
    expect(second.stdout.split('\n')[0]).toBe('session readme-demo: resumed, turn 2 · log t/readme-demo.jsonl')
    expect(lastLine(second.stdout)).toBe('turn 2 completed · 2 steps · 2 tool calls · t/readme-demo.jsonl')
    const inspected = await yoke(cwd, 'inspect', 'readme-demo', '--dir', 't', '--json')
    expect((JSON.parse(inspected.stdout) as { turns: { reason: string }[] }).turns.map((turn) => turn.reason)).toEqual([
      'completed',
      'completed',
    ])
  })

  test('yoke demo and examples/main.ts print the same transcript, run after run, default directory included', async () => {
    const [cliCwd, exampleCwd] = [await freshDir(), await freshDir()]
    for (const turn of [1, 2]) {
      const [fromCli, fromExample] = await Promise.all([
        yoke(cliCwd, 'demo'),
        runNode(example.file, [], { cwd: exampleCwd }),
      ])
      expect(fromCli).toEqual(fromExample)
      expect(lastLine(fromCli.stdout)).toBe(
        `turn ${turn} completed · 2 steps · 2 tool calls · sessions/readme-demo.jsonl`,
      )
    }
  })

  test('with DEEPSEEK_API_KEY it uses that endpoint; a failed turn exits 1 like the example', async () => {
    const cwd = await freshDir()
    const servers = await Promise.all([
      startMockOpenAIServer({ script: [{ fault: 'auth' }] }),
      startMockOpenAIServer({ script: [{ fault: 'auth' }] }),
    ])
    try {
      const [cliServer, exampleServer] = servers
      const env = (baseURL: string) => ({ DEEPSEEK_API_KEY: 'wrong', DEEPSEEK_BASE_URL: baseURL })
      const [fromCli, fromExample] = await Promise.all([
        yokeWith(env(cliServer.baseURL), cwd, 'demo', '--dir', 'a'),
        runNode(example.file, ['--dir', 'a'], { cwd: await freshDir(), env: env(exampleServer.baseURL) }),
      ])
      expect(fromCli.code).toBe(1)
      expect(lastLine(fromCli.stdout)).toMatch(/^turn 1 error AUTH: /)
      expect(fromCli).toEqual(fromExample)
      expect(cliServer.requests.map((request) => request.headers['authorization'])).toEqual(['Bearer wrong'])
    } finally {
      await Promise.all(servers.map((server) => server.close()))
    }
  })
})
