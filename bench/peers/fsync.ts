/** The machine's cost of one `fdatasync`, measured in the same run as the cases. */
import { mkdtemp, open, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FsyncResult } from './job.js'
import { median } from './stats.js'

/** µs of one small write + `fdatasync` on a temp file, the median of `count`. */
export async function measureFsync(count: number): Promise<FsyncResult> {
  const dir = await mkdtemp(join(tmpdir(), 'yoke-peers-fsync-'))
  const file = await open(join(dir, 'probe.jsonl'), 'a')
  const line = `${JSON.stringify({ type: 'probe', data: 'x'.repeat(260) })}\n`
  const times: number[] = []
  try {
    for (let index = 0; index < count + 5; index++) {
      const started = performance.now()
      await file.write(line)
      await file.datasync()
      if (index >= 5) times.push((performance.now() - started) * 1_000)
    }
  } finally {
    await file.close()
    await rm(dir, { recursive: true, force: true })
  }
  return { kind: 'fsync', wallPerSync: median(times) }
}
