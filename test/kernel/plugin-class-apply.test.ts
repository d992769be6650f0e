import { describe, expect, test } from 'vitest'
import { CompositionError, createHarness, describeHarness, InvalidPluginError } from 'yoke'
import { thrownBy } from '../helpers/outcomes.js'

/** A class given as a plugin that forgot its `apply` method. */
class NoApplyPlugin {
  static readonly pluginName = 'no-apply'
  start(): void {}
}

/** A class without `pluginName`: its own name is the plugin's name. */
class Unnamed {}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('expected a rejection')
}

describe('a plugin class without apply', () => {
  test.each([
    ['bare', [NoApplyPlugin], 'no-apply'],
    ['as an entry with a config', [{ plugin: NoApplyPlugin, config: { level: 1 } }], 'no-apply'],
    ['as an entry with an id', [{ id: 'mine', plugin: NoApplyPlugin }], 'no-apply'],
    ['bare, named by its class name', [Unnamed], 'Unnamed'],
    ['an arrow function as an entry', [{ plugin: () => undefined }], 'plugin'],
  ])('%s is an InvalidPluginError with field apply, not a composition error', (_label, plugins, name) => {
    const error = thrownBy(() => describeHarness({ plugins: plugins as never }))
    expect(CompositionError.is(error)).toBe(false)
    expect(InvalidPluginError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'INVALID_PLUGIN', field: 'apply', plugin: name })
  })

  test('createHarness rejects with the same error for both forms', async () => {
    for (const plugins of [[NoApplyPlugin], [{ plugin: NoApplyPlugin, config: {} }]]) {
      const error = await rejection(createHarness({ plugins: plugins as never }))
      expect(InvalidPluginError.is(error)).toBe(true)
      expect(error).toMatchObject({ field: 'apply', plugin: 'no-apply' })
      expect((error as Error).message).toBe(
        'plugin "no-apply" has an invalid apply: a plugin class must have an apply method on its prototype',
      )
    }
  })

  test('a non-function, non-entry item is still a composition error', () => {
    const error = thrownBy(() => describeHarness({ plugins: [42 as never] }))
    expect(CompositionError.is(error)).toBe(true)
    expect(error).toMatchObject({ reason: 'invalid-entry' })
  })
})
