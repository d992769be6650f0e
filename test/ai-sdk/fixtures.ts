/**
 * Scaffolding the `yoke/ai-sdk` tests share: the tools they give the model, a temporary directory
 * per test, and cleanups run after each test.
 *
 * @module
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach } from 'vitest'
import { createHarness, defineTool, type Harness, type HarnessOptions } from 'yoke'
import { z } from 'zod'
import { aiSdkModel } from '../../src/ai-sdk/index.js'
import { openAllGates } from '../helpers/gates.js'

/** A tool that answers `found <q>`. */
export const lookupTool = defineTool({
  name: 'lookup',
  description: 'Looks a word up.',
  input: z.object({ q: z.string() }),
  execute: (args) => `found ${args.q}`,
})

/** A tool that answers `sunny in <city>`. */
export const weatherTool = defineTool({
  name: 'weather',
  description: 'The weather in a city.',
  input: z.object({ city: z.string() }),
  execute: (args) => `sunny in ${args.city}`,
})

/**
 * A `weather` tool that answers only once `held` settles, so a test can act while its turn runs.
 *
 * @param held - what the tool waits for
 * @param answer - the tool's result for the city asked about
 * @param description - the tool's description
 */
export function heldWeatherTool(held: Promise<void>, answer: (city: string) => string, description = 'Slow weather.') {
  return defineTool({
    name: 'weather',
    description,
    input: z.object({ city: z.string() }),
    execute: async (args) => {
      await held
      return answer(args.city)
    },
  })
}

/**
 * A fresh temporary directory for each test of the calling file, removed after it.
 *
 * @param prefix - the directory name's start
 * @returns the current test's directory
 */
export function useTempDir(prefix: string): () => string {
  let dir: string | undefined
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), prefix))
  })
  afterEach(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  })
  return () => {
    if (dir === undefined) throw new Error('the temporary directory exists only during a test')
    return dir
  }
}

/**
 * What to undo after each test of the calling file: every gate is opened first (so no held call
 * outlives its test), then the cleanups run, the last pushed first.
 *
 * @returns the list a test pushes its cleanups to
 */
export function useCleanups(): (() => Promise<void>)[] {
  const cleanups: (() => Promise<void>)[] = []
  afterEach(async () => {
    openAllGates()
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  })
  return cleanups
}

/**
 * A harness over a JSONL directory with {@link lookupTool}, for an AI SDK model.
 *
 * @param model - the AI SDK model
 * @param dir - the JSONL directory
 * @param options - more harness options (fake ids, say)
 */
export function lookupHarness(
  model: Parameters<typeof aiSdkModel>[0],
  dir: string,
  options: Partial<HarnessOptions> = {},
): Promise<Harness> {
  return createHarness({ model: aiSdkModel(model), tools: [lookupTool], persistence: { dir }, ...options })
}
