import type { Context } from 'yoke'
import { createRootContext } from '../../src/kernel/index.js'
import { fakeClock, fakeIds } from 'yoke/testing'
import { type RecordingLogger, recordingLogger } from './recording-logger.js'
import { testEvents } from './test-events.js'

/** A bare root with the test catalog registered, a recording logger and fake host services. */
export function testRoot(): { root: Context; logger: RecordingLogger; clock: ReturnType<typeof fakeClock> } {
  const logger = recordingLogger()
  const clock = fakeClock({ now: 0 })
  const root = createRootContext({ logger, clock, ids: fakeIds() })
  root.registerEvents(testEvents)
  return { root, logger, clock }
}
