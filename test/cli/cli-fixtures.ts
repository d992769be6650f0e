/**
 * Session logs for the CLI tests, written by a real harness (scripted model, fake clock and ids)
 * and then damaged the way a crash or a disk would.
 */
import { appendFile, readdir, readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { z } from 'zod'
import { createHarness, defineTool, type SessionEvent } from 'yoke'
import { call, fakeClock, fakeIds, scriptedModel, text } from 'yoke/testing'

/** The session id of every fixture. */
export const fixtureId = 'readme-demo'

/** The prompts of the two turns. */
export const prompts = ['What does echo say?', 'Echo ping, please.'] as const

/** The usage of every scripted reply. */
const usage = { inputTokens: 10, outputTokens: 11 }

const echo = defineTool({
  name: 'echo',
  description: 'Echoes its text.',
  input: z.object({ text: z.string() }),
  execute: ({ text: value }) => `echo: ${value}`,
})

/**
 * Writes two completed turns into `<dir>/readme-demo.jsonl`; turn 2 calls `echo` as `c1`.
 *
 * @param dir - a fresh directory
 * @returns the log file and the events as a persistence `load` returns them
 */
export async function writeTwoTurns(dir: string): Promise<{ file: string; events: readonly SessionEvent[] }> {
  const harness = await createHarness({
    persistence: { dir },
    model: scriptedModel([
      text('one', { usage }),
      call('c1', 'echo', '{"text":"ping"}', { usage }),
      text('done', { usage }),
    ]),
    clock: fakeClock({ now: 1_000 }),
    ids: fakeIds(),
    tools: [echo],
  })
  try {
    const agent = await harness.createAgent({ sessionId: fixtureId })
    for (const prompt of prompts) {
      const result = await agent.run(prompt)
      if (result.reason.kind !== 'completed') throw new Error(`fixture turn ${result.turn} ended ${result.reason.kind}`)
    }
  } finally {
    await harness.close()
  }
  const check = await createHarness({ persistence: { dir } })
  try {
    const loaded = await check.persistence.load(fixtureId)
    return { file: join(dir, `${fixtureId}.jsonl`), events: loaded.events }
  } finally {
    await check.close()
  }
}

/** The log's lines (header first), without the trailing newline. */
export async function logLines(file: string): Promise<string[]> {
  return (await readFile(file, 'utf8')).replace(/\n$/, '').split('\n')
}

/**
 * A crashed log: the two-turn log cut right after turn 2's `tool/call` `c1`.
 *
 * @param dir - a fresh directory
 * @returns the log file and its line count
 */
export async function writeCrashedLog(dir: string): Promise<{ file: string; lines: number }> {
  const { file } = await writeTwoTurns(dir)
  const lines = await logLines(file)
  const cut = lines.findIndex((line) => {
    const record = JSON.parse(line) as { type: string; data?: { callId?: string } }
    return record.type === 'tool/call' && record.data?.callId === 'c1'
  })
  if (cut === -1) throw new Error('fixture: no tool/call c1')
  await writeFile(file, `${lines.slice(0, cut + 1).join('\n')}\n`)
  return { file, lines: cut + 1 }
}

/** Seventeen stray bytes, as a crash leaves them after the last newline. */
export const tornTail = '{"type":"turn/sta'

/**
 * A clean two-turn log with {@link tornTail} appended.
 *
 * @param dir - a fresh directory
 * @returns the log file
 */
export async function writeTornLog(dir: string): Promise<string> {
  const { file } = await writeTwoTurns(dir)
  await appendFile(file, tornTail)
  return file
}

/**
 * A two-turn log whose line 5 is garbage while valid records follow (damage, not a torn tail).
 *
 * @param dir - a fresh directory
 * @returns the log file and the 0-based index of the damaged line
 */
export async function writeCorruptLog(dir: string): Promise<{ file: string; damaged: number }> {
  const { file } = await writeTwoTurns(dir)
  const lines = await logLines(file)
  const damaged = 5
  lines[damaged] = 'this is not JSON'
  await writeFile(file, `${lines.join('\n')}\n`)
  return { file, damaged }
}

/**
 * A two-turn log whose header claims format version 99.
 *
 * @param dir - a fresh directory
 * @returns the log file
 */
export async function writeNewerFormatLog(dir: string): Promise<string> {
  const { file } = await writeTwoTurns(dir)
  const lines = await logLines(file)
  lines[0] = (lines[0] as string).replace('"version":1', '"version":99')
  await writeFile(file, `${lines.join('\n')}\n`)
  return file
}

/** A file's bytes and modification time. */
export interface FileState {
  readonly bytes: string
  readonly mtimeMs: number
}

/**
 * Every file in `dir` with its bytes (base64) and mtime, to prove a command changed nothing.
 *
 * @param dir - a directory
 * @returns name → state
 */
export async function snapshot(dir: string): Promise<Record<string, FileState>> {
  const states: Record<string, FileState> = {}
  for (const name of (await readdir(dir)).sort()) {
    const path = join(dir, name)
    states[name] = { bytes: (await readFile(path)).toString('base64'), mtimeMs: (await stat(path)).mtimeMs }
  }
  return states
}
