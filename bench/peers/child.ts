/**
 * One measurement in a fresh process: forked by the runner with the job as JSON in `argv[2]`; sends
 * the result (with the process's peak RSS) back over IPC and exits.
 */
import type { Job, JobResult } from './job.js'

async function measure(job: Job): Promise<Omit<JobResult, 'peakRss'>> {
  switch (job.kind) {
    case 'turns':
      return (await import('./turns.js')).measureTurns(job)
    case 'fsync':
      return (await import('./fsync.js')).measureFsync(job.count)
    case 'stream':
      return (await import('./stream.js')).measureStream(job)
    case 'load':
      return (await import('./figures.js')).measureLoad(job)
    case 'cycles':
      return (await import('./figures.js')).measureCycles(job)
    case 'idle':
      return (await import('./figures.js')).measureIdle(job)
  }
}

const job = JSON.parse(process.argv[2] ?? '{}') as Job
const result = await measure(job)
const message: JobResult = { ...result, peakRss: process.resourceUsage().maxRSS * 1_024 } as JobResult
// Disconnect once the message is out, so the child ends by itself when the runtime left nothing running.
process.send?.(message, () => process.disconnect?.())
