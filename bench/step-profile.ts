/**
 * CPU per agent step, for profiling (not part of `npm run bench`'s table): a scripted model, one
 * no-op tool, memory persistence; every turn has two steps (a tool call, then text).
 *
 * - `fresh`: `sessions` fresh agents, one turn each; CPU µs per step of `agent.run` alone and of the
 *   agent's whole life (create, run, dispose).
 * - `long`: one agent, `turns` turns; CPU µs per step over the first and last 10% of the turns.
 *
 * Run (built `dist`, so the profile names the shipped functions):
 * ```sh
 * npx tsup --silent
 * npx tsx --tsconfig tsconfig.bench.json bench/step-profile.ts fresh 2000
 * npx tsx --tsconfig tsconfig.bench.json bench/step-profile.ts long 1000
 * node --cpu-prof --cpu-prof-dir=.build/prof --import tsx bench/step-profile.ts fresh 4000
 * ```
 */
import { z } from 'zod'
import { createHarness, defineTool, type Logger } from 'yoke'
import { type ScriptEntry, scriptedModel, text, tool } from 'yoke/testing'

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} }
const noop = defineTool({ name: 'noop', description: 'Does nothing', input: z.object({}), execute: () => 'ok' })
const STEPS_PER_TURN = 2
/** Under `--cpu-prof` the per-run `process.cpuUsage()` calls would show in the profile: only whole rounds are measured. */
const profiling = process.execArgv.some((flag) => flag.startsWith('--cpu-prof'))

function scriptOf(turns: number): ScriptEntry[] {
  return Array.from({ length: turns }, () => [tool('noop', {}), text('done')]).flat()
}

const cpuMicros = (since: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(since)
  return used.user + used.system
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((left, right) => left - right)
  return sorted[Math.floor(sorted.length / 2)] as number
}

/** `sessions` fresh one-turn agents; CPU µs per step (run alone, and the whole life). */
async function fresh(sessions: number): Promise<{ run: number; life: number; wallP10: number }> {
  const harness = await createHarness({ model: scriptedModel(scriptOf(sessions)), tools: [noop], logger: silent })
  let run = 0
  const walls: number[] = []
  const lifeStart = process.cpuUsage()
  for (let index = 0; index < sessions; index++) {
    const agent = await harness.createAgent()
    const started = profiling ? undefined : process.cpuUsage()
    const wallStart = performance.now()
    const result = await agent.run('hi')
    walls.push(((performance.now() - wallStart) * 1_000) / STEPS_PER_TURN)
    if (started !== undefined) run += cpuMicros(started)
    if (result.reason.kind !== 'completed' || result.text !== 'done') throw new Error('unexpected turn end')
    await agent.dispose()
  }
  const life = cpuMicros(lifeStart)
  await harness.close()
  const steps = sessions * STEPS_PER_TURN
  walls.sort((left, right) => left - right)
  // The 10th percentile of the per-run wall time: the runs least disturbed by other processes.
  return { run: run / steps, life: life / steps, wallP10: walls[Math.floor(walls.length / 10)] as number }
}

/** One agent, `turns` turns; CPU µs per step of each turn. */
async function long(turns: number): Promise<number[]> {
  const harness = await createHarness({ model: scriptedModel(scriptOf(turns)), tools: [noop], logger: silent })
  const agent = await harness.createAgent()
  const perStep: number[] = []
  for (let turn = 1; turn <= turns; turn++) {
    const started = process.cpuUsage()
    const result = await agent.run(`question ${turn}`)
    perStep.push(cpuMicros(started) / STEPS_PER_TURN)
    if (result.turn !== turn || result.reason.kind !== 'completed') throw new Error(`turn ${turn} failed`)
  }
  await harness.close()
  return perStep
}

const [mode = 'fresh', countText] = process.argv.slice(2)
if (mode === 'fresh') {
  const count = Number(countText ?? 2_000)
  await fresh(Math.min(count, 500))
  const rounds = []
  for (let round = 0; round < 3; round++) rounds.push(await fresh(count))
  const best = rounds.reduce((left, right) => (right.run < left.run ? right : left))
  console.log(
    `fresh x${count}: CPU µs per step, run ${best.run.toFixed(1)} (rounds ${rounds.map((entry) => entry.run.toFixed(1)).join(', ')}); whole life ${best.life.toFixed(1)}; wall p10 per step ${Math.min(...rounds.map((entry) => entry.wallP10)).toFixed(1)}`,
  )
} else if (mode === 'long') {
  const count = Number(countText ?? 1_000)
  await long(50)
  const perStep = await long(count)
  const window = Math.max(1, Math.floor(count / 10))
  const first = median(perStep.slice(0, window))
  const last = median(perStep.slice(-window))
  const firstFew = median(perStep.slice(0, 10))
  const lastFew = median(perStep.slice(-10))
  console.log(
    `long x${count}: CPU µs per step, first 10% ${first.toFixed(1)} → last 10% ${last.toFixed(1)} (${(last / first).toFixed(2)}×); turns 1–10 ${firstFew.toFixed(1)} → last 10 ${lastFew.toFixed(1)} (${(lastFew / firstFew).toFixed(2)}×)`,
  )
} else {
  console.error(`unknown mode ${mode}: fresh | long`)
  process.exit(2)
}
