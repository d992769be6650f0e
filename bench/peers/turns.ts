/** The turn measurement of one runtime in this process: fresh conversations or one long one. */
import { STEPS_PER_TURN } from './cases/case.js'
import { runtimes } from './cases/index.js'
import type { Job, TurnsResult } from './job.js'
import { median } from './stats.js'
import { syncCounts } from './sync-counter.js'

type TurnsJob = Extract<Job, { kind: 'turns' }>

const cpuNow = (): number => {
  const usage = process.cpuUsage()
  return usage.user + usage.system
}
const syncsNow = (): number => {
  const counts = syncCounts()
  return counts.fsync + counts.fdatasync
}

/** Runs the job's turns and returns its per-step figures (µs). */
export async function measureTurns(job: TurnsJob): Promise<TurnsResult> {
  let runtime: Awaited<ReturnType<(typeof runtimes)[typeof job.runtime]>>
  try {
    runtime = await runtimes[job.runtime]()
  } catch (error) {
    const nan = Number.NaN
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error)
    return {
      kind: 'turns',
      ...{ cpuPerStep: nan, wallPerStep: nan, firstWall: nan, lastWall: nan, firstCpu: nan, lastCpu: nan },
      ...{ syncsPerStep: nan, continuingSyncsPerStep: nan },
      unavailable: reason ?? 'unavailable',
    }
  }
  try {
    if (job.mode === 'fresh') {
      for (let index = 0; index < job.warmup; index++) {
        const conversation = await runtime.conversation()
        await conversation.turn(`warm-up ${index}`)
        await conversation.close()
      }
      const syncs = syncsNow()
      const cpu = cpuNow()
      const started = performance.now()
      for (let index = 0; index < job.turns; index++) {
        const conversation = await runtime.conversation()
        await conversation.turn(`question ${index}`)
        await conversation.close()
      }
      const wallPerStep = ((performance.now() - started) * 1_000) / (job.turns * STEPS_PER_TURN)
      const cpuPerStep = (cpuNow() - cpu) / (job.turns * STEPS_PER_TURN)
      const syncsPerStep = (syncsNow() - syncs) / (job.turns * STEPS_PER_TURN)
      return {
        kind: 'turns',
        cpuPerStep,
        wallPerStep,
        firstWall: wallPerStep,
        lastWall: wallPerStep,
        firstCpu: cpuPerStep,
        lastCpu: cpuPerStep,
        syncsPerStep,
        continuingSyncsPerStep: syncsPerStep,
      }
    }
    if (job.warmup > 0) {
      const warm = await runtime.conversation()
      for (let index = 0; index < job.warmup; index++) await warm.turn(`warm-up ${index}`)
      await warm.close()
    }
    const conversation = await runtime.conversation()
    const walls: number[] = []
    const cpus: number[] = []
    const syncs = syncsNow()
    let afterFirst = syncs
    const cpu = cpuNow()
    const started = performance.now()
    for (let index = 0; index < job.turns; index++) {
      const turnCpu = cpuNow()
      const turnStarted = performance.now()
      await conversation.turn(`question ${index}`)
      walls.push(((performance.now() - turnStarted) * 1_000) / STEPS_PER_TURN)
      cpus.push((cpuNow() - turnCpu) / STEPS_PER_TURN)
      if (index === 0) afterFirst = syncsNow()
    }
    const wallPerStep = ((performance.now() - started) * 1_000) / (job.turns * STEPS_PER_TURN)
    const cpuPerStep = (cpuNow() - cpu) / (job.turns * STEPS_PER_TURN)
    const end = syncsNow()
    await conversation.close()
    const tenth = Math.max(1, Math.round(job.turns / 10))
    return {
      kind: 'turns',
      cpuPerStep,
      wallPerStep,
      firstWall: median(walls.slice(0, tenth)),
      lastWall: median(walls.slice(-tenth)),
      firstCpu: median(cpus.slice(0, tenth)),
      lastCpu: median(cpus.slice(-tenth)),
      syncsPerStep: (end - syncs) / (job.turns * STEPS_PER_TURN),
      continuingSyncsPerStep: job.turns > 1 ? (end - afterFirst) / ((job.turns - 1) * STEPS_PER_TURN) : Number.NaN,
    }
  } finally {
    await runtime.close()
  }
}
