import { describe, expect, test } from 'vitest'
import { createHarness, definePlugin } from 'yoke'
import { recordingLogger } from '../helpers/recording-logger.js'
import { testEvents } from '../helpers/test-events.js'

describe('createHarness smoke', () => {
  test('boots a plugin with the test catalog and closes', async () => {
    const plugin = definePlugin({
      name: 'p',
      events: [testEvents],
      apply(ctx) {
        ctx.on('test/e', () => {})
      },
    })
    const harness = await createHarness({ plugins: [plugin], logger: recordingLogger() })
    expect(harness.describe().entries.at(-1)?.id).toBe('p')
    await harness.close()
    expect(harness.closed).toBe(true)
  })
})
