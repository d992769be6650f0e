/**
 * A long-running service creates, runs, disposes and deletes one session per conversation, each
 * with a fresh id: once a session is gone, nothing in the harness, the kernel or the adapter may
 * still hold its id (no map entry per id that outlives the session), so memory stays flat however
 * many ids went through.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { getHeapSnapshot } from 'node:v8'
import { afterEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { type Context, createHarness, defineTool, type Harness, jsonlPersistence, memoryPersistence } from 'yoke'
import { scriptedModel, text, tool } from 'yoke/testing'
import { effectRecordsOf, siblingLabelsOf } from '../../src/kernel/context.js'
import { jsonlIdsHeld } from '../../src/persistence/jsonl/jsonl-persistence.js'
import type { MemoryStoreState } from '../../src/persistence/memory-store.js'

const agents = 1_000
const dirs: string[] = []
const harnesses: Harness[] = []

afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close()
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

const echo = defineTool({
  name: 'echo',
  description: 'Echoes its input',
  input: z.object({ value: z.string() }),
  execute: ({ value }) => value,
})

/** A prefix no other string in the process contains, so every id of a run can be found by it. */
function uniquePrefix(): string {
  return `per-id-${Math.random().toString(36).slice(2, 10)}-`
}

/**
 * Creates, runs, disposes and deletes `count` agents with fresh ids. With `withTool` each turn
 * makes one tool call before its text (two steps, more checkpoints: slower on disk).
 */
async function churn(harness: Harness, prefix: string, count: number, withTool: boolean): Promise<void> {
  for (let index = 0; index < count; index++) {
    const sessionId = `${prefix}${index}`
    const agent = await harness.createAgent({
      sessionId,
      model: scriptedModel(withTool ? [tool('echo', { value: 'v' }), text('done')] : [text('done')]),
    })
    const result = await agent.run('hi')
    expect(result.reason.kind).toBe('completed')
    // While the agent lives, its context label is found (so the checks below look in the right place).
    if (index === 0) expect(siblingLabelsWith(harness, prefix)).toEqual([`agent:${sessionId}`])
    await agent.dispose()
    await harness.persistence.delete(sessionId)
  }
}

/** Every context of the tree under `root`, root first. */
function contextsUnder(root: Context): Context[] {
  const found: Context[] = [root]
  for (let index = 0; index < found.length; index++) {
    for (const record of effectRecordsOf(found[index]!)) {
      // The record of a child context (or a plugin's) holds that context.
      if (record.child !== undefined) found.push(record.child as Context)
    }
  }
  return found
}

/** The sibling-count labels anywhere in the harness's context tree that mention `prefix`. */
function siblingLabelsWith(harness: Harness, prefix: string): string[] {
  return contextsUnder(harness.ctx).flatMap((context) =>
    siblingLabelsOf(context).filter((label) => label.includes(prefix)),
  )
}

/**
 * The distinct ids of this run still reachable anywhere in the process: a heap snapshot (taken
 * after a full collection) names every live string, and an id shows as itself or inside a longer
 * string (`agent:<id>`, a path, a file name).
 */
async function reachableIds(prefix: string): Promise<Set<string>> {
  const chunks: string[] = []
  for await (const chunk of getHeapSnapshot()) chunks.push(String(chunk))
  const snapshot = JSON.parse(chunks.join('')) as { readonly strings: readonly string[] }
  const pattern = new RegExp(`${prefix}\\d+`, 'g')
  const ids = new Set<string>()
  for (const value of snapshot.strings) {
    if (!value.includes(prefix)) continue
    for (const match of value.matchAll(pattern)) ids.add(match[0])
  }
  return ids
}

describe('a deleted session leaves no per-id state behind', () => {
  test(`memory persistence: ${agents} agents created, run, disposed and deleted`, async () => {
    const adapter = memoryPersistence()
    const harness = await createHarness({ persistence: adapter, tools: [echo] })
    harnesses.push(harness)
    const prefix = uniquePrefix()
    await churn(harness, prefix, agents, true)

    const store = adapter.store as MemoryStoreState
    const withPrefix = (keys: Iterable<string>): string[] => [...keys].filter((key) => key.includes(prefix))
    expect(withPrefix(store.logs.keys())).toEqual([])
    expect(withPrefix(store.leases.keys())).toEqual([])
    expect(withPrefix(store.quarantine.keys())).toEqual([])
    expect(withPrefix(store.epochs.keys())).toEqual([])
    expect(siblingLabelsWith(harness, prefix)).toEqual([])
    // Whatever else might hold an id (a registry, a queue, a catalog): at most the last id, still
    // on the stack or in an engine cache, may be found.
    const reachable = await reachableIds(prefix)
    // Named in the failure, so a retained id says where to look (`${prefix}17` is the 18th agent).
    expect(reachable.size, `ids still reachable: ${[...reachable].join(', ')}`).toBeLessThanOrEqual(2)
  }, 300_000)

  test(`JSONL persistence: ${agents} agents created, run, disposed and deleted`, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'yoke-per-id-'))
    dirs.push(dir)
    const adapter = jsonlPersistence({ dir })
    const harness = await createHarness({ persistence: adapter, tools: [echo] })
    harnesses.push(harness)
    const prefix = uniquePrefix()
    // Tool calls add nothing per id that the memory test does not cover; without them the test
    // syncs half as often.
    await churn(harness, prefix, agents, false)

    expect(jsonlIdsHeld(adapter).filter((id) => id.includes(prefix))).toEqual([])
    expect(siblingLabelsWith(harness, prefix)).toEqual([])
    const reachable = await reachableIds(prefix)
    // Named in the failure, so a retained id says where to look (`${prefix}17` is the 18th agent).
    expect(reachable.size, `ids still reachable: ${[...reachable].join(', ')}`).toBeLessThanOrEqual(2)
  }, 300_000)
})
