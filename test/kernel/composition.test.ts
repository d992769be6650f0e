import { describe, expect, test, vi } from 'vitest'
import {
  CompositionError,
  createHarness,
  definePlugin,
  describeHarness,
  type EntryPatch,
  HarnessError,
  type HarnessOptions,
  InvalidOptionsError,
  UnknownEntryError,
} from 'yoke'
import type { ComposedEntry } from '../../src/kernel/index.js'
import { composeEntries } from '../../src/harness/index.js'
import { defaultIds } from '../helpers/no-defaults.js'
import { cloneOptions, deepFreeze, rejectionOf, thrownBy } from '../helpers/outcomes.js'
import { recordingLogger } from '../helpers/recording-logger.js'

function asCompositionError(value: unknown): CompositionError {
  expect(CompositionError.is(value)).toBe(true)
  expect(HarnessError.is(value)).toBe(true)
  const typed = value as CompositionError
  expect(typed.code).toBe('COMPOSITION_INVALID')
  return typed
}

function asUnknownEntry(value: unknown): UnknownEntryError {
  expect(UnknownEntryError.is(value)).toBe(true)
  const typed = value as UnknownEntryError
  expect(typed.code).toBe('UNKNOWN_ENTRY')
  return typed
}

function entry(entries: readonly ComposedEntry[], id: string): ComposedEntry {
  const found = entries.find((item) => item.id === id)
  if (found === undefined) throw new Error(`no entry ${id}`)
  return found
}

const metrics = definePlugin({ name: 'metrics', apply() {} })

describe('layers and provenance', () => {
  test('the default bundle comes first, then plugins, then patches', () => {
    const { entries } = describeHarness({ plugins: [metrics], patches: [{ id: 'retry', disabled: true }] })
    expect(entries.map((item) => item.id)).toEqual([
      'session',
      'persistence',
      'model',
      'tools',
      'system-prompt',
      'agent-loop',
      'retry',
      'compaction',
      'metrics',
    ])
    expect(entries.map((item) => item.source)).toEqual([...defaultIds.map(() => 'default'), 'plugins[0]'])
    const retry = entries.find((item) => item.id === 'retry')
    expect(retry).toEqual({
      id: 'retry',
      name: 'retry',
      source: 'default',
      patchedBy: ['patches[0]'],
      disabled: true,
      inject: ['sessions'],
      optional: [],
      provides: [],
      startIndex: null,
    })
    const started = entries.flatMap((item) => (item.startIndex === null ? [] : [item.startIndex]))
    expect(started.sort((left, right) => left - right)).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
    expect(entries.at(-1)?.startIndex).toBe(7)
  })

  test('an id already in the list is a duplicate-id CompositionError', () => {
    const error = asCompositionError(thrownBy(() => describeHarness({ plugins: [{ id: 'retry', plugin: metrics }] })))
    expect(error.reason).toBe('duplicate-id')
    expect(error.id).toBe('retry')
    expect(error.patch).toBe('plugins[0]')
  })

  test('the same plugin twice under one id is a duplicate; under two ids it is fine', async () => {
    const duplicate = asCompositionError(
      await rejectionOf(createHarness({ plugins: [metrics, metrics], logger: recordingLogger() })),
    )
    expect(duplicate.reason).toBe('duplicate-id')
    expect(duplicate.id).toBe('metrics')
    expect(duplicate.patch).toBe('plugins[1]')
    const entries = composeEntries({ plugins: [metrics, { id: 'metrics-2', plugin: metrics }] })
    expect(entries.slice(-2).map((item) => [item.id, item.source])).toEqual([
      ['metrics', 'plugins[0]'],
      ['metrics-2', 'plugins[1]'],
    ])
  })

  test.each([
    ['upper case', 'Metrics'],
    ['a slash', 'a/b'],
    ['an empty id', ''],
    ['a leading dash', '-metrics'],
    ['65 characters', `a${'b'.repeat(64)}`],
  ])('an id with %s is an invalid-id CompositionError', (_label, id) => {
    const error = asCompositionError(thrownBy(() => composeEntries({ plugins: [{ id, plugin: metrics }] })))
    expect(error.reason).toBe('invalid-id')
    expect(error.id).toBe(id)
    expect(error.patch).toBe('plugins[0]')
  })

  test('a definition’s id is its name in kebab case', () => {
    const names = ['ExamplePlugin', 'HTTPServer', 'my_plugin', 'already-kebab', 'v2Metrics']
    const entries = composeEntries({ plugins: names.map((name) => definePlugin({ name, apply() {} })) })
    expect(entries.slice(-5).map((item) => item.id)).toEqual([
      'example-plugin',
      'http-server',
      'my-plugin',
      'already-kebab',
      'v2-metrics',
    ])
  })

  test('a value that is neither a plugin nor an entry is an invalid-entry CompositionError', () => {
    const error = asCompositionError(thrownBy(() => composeEntries({ plugins: [42 as unknown as typeof metrics] })))
    expect(error.reason).toBe('invalid-entry')
    expect(error.patch).toBe('plugins[0]')
  })

  test('an entry keeps its config and disabled flag', () => {
    const config = { level: 1 }
    const entries = composeEntries({ plugins: [{ plugin: metrics, config, disabled: true }] })
    const composed = entry(entries, 'metrics')
    expect(composed.config).toBe(config)
    expect(composed.disabled).toBe(true)
    expect(composed.plugin).toBe(metrics)
    expect(composed.patchedBy).toEqual([])
  })
})

describe('replace vs merge', () => {
  const original = () => ({ a: 1, b: { c: 2 }, list: [1, 2] })

  test('config replaces the whole config', () => {
    const config = original()
    const entries = composeEntries({
      plugins: [{ plugin: metrics, config }],
      patches: [{ id: 'metrics', config: { b: { d: 3 } } }],
    })
    expect(entry(entries, 'metrics').config).toEqual({ b: { d: 3 } })
    expect(entry(entries, 'metrics').patchedBy).toEqual(['patches[0]'])
    expect(config).toEqual(original())
  })

  test('config: undefined replaces the config with undefined, like any other value', () => {
    const entries = composeEntries({
      plugins: [{ plugin: metrics, config: original() }],
      patches: [{ id: 'metrics', config: undefined }],
    })
    expect(entry(entries, 'metrics').config).toBeUndefined()
    expect(entry(entries, 'metrics').patchedBy).toEqual(['patches[0]'])
    expect(describeHarness({ patches: [{ id: 'model', config: undefined }] }).entries[2]).not.toHaveProperty('config')
  })

  test('merge deep-merges plain objects, replaces arrays and removes undefined keys', () => {
    const config = original()
    const merge = { b: { d: 3 }, list: [9], a: undefined }
    const entries = composeEntries({ plugins: [{ plugin: metrics, config }], patches: [{ id: 'metrics', merge }] })
    const merged = entry(entries, 'metrics').config
    expect(merged).toStrictEqual({ b: { c: 2, d: 3 }, list: [9] })
    expect(config).toStrictEqual(original())
    expect(merge).toStrictEqual({ b: { d: 3 }, list: [9], a: undefined })
    expect((merged as { list: number[] }).list).toBe(merge.list)
  })

  test('a plain patch object over a missing or non-object value is merged into a fresh object, undefined keys removed', () => {
    const patch = { b: { c: undefined, d: 1 }, n: { deep: { gone: undefined, kept: 2 } } }
    const entries = composeEntries({
      plugins: [{ plugin: metrics, config: { n: 5 } }],
      patches: [{ id: 'metrics', merge: patch }],
    })
    const merged = entry(entries, 'metrics').config as { b: object; n: { deep: object } }
    expect(merged).toStrictEqual({ b: { d: 1 }, n: { deep: { kept: 2 } } })
    expect(merged.b).not.toBe(patch.b)
    expect(merged.n.deep).not.toBe(patch.n.deep)
    expect(patch).toStrictEqual({ b: { c: undefined, d: 1 }, n: { deep: { gone: undefined, kept: 2 } } })
  })

  test('class instances and functions replace rather than merge; an absent config merges as {}', () => {
    class Client {
      constructor(readonly url: string) {}
    }
    const before = new Client('a')
    const after = new Client('b')
    const handler = (): void => {}
    const entries = composeEntries({
      plugins: [
        { plugin: metrics, config: { client: before } },
        { id: 'empty', plugin: metrics },
      ],
      patches: [
        { id: 'metrics', merge: { client: after, handler } },
        { id: 'empty', merge: { added: { deep: 1 } } },
      ],
    })
    const merged = entry(entries, 'metrics').config as { client: Client; handler: () => void }
    expect(merged.client).toBe(after)
    expect(merged.handler).toBe(handler)
    expect(before.url).toBe('a')
    expect(entry(entries, 'empty').config).toEqual({ added: { deep: 1 } })
  })

  test('successive patches compose in order and toggles may be undone', () => {
    const entries = composeEntries({
      plugins: [{ plugin: metrics, config: { level: 1 } }],
      patches: [
        { id: 'metrics', disabled: true },
        { id: 'metrics', merge: { tags: ['a'] } },
        { id: 'metrics', merge: { level: 3 }, disabled: false },
      ],
    })
    const composed = entry(entries, 'metrics')
    expect(composed.config).toEqual({ level: 3, tags: ['a'] })
    expect(composed.disabled).toBe(false)
    expect(composed.patchedBy).toEqual(['patches[0]', 'patches[1]', 'patches[2]'])
  })

  test.each([
    ['config', {}],
    ['config: undefined', undefined],
  ])('%s together with merge is an invalid-patch CompositionError', (_label, config) => {
    const patch = { id: 'retry', config, merge: {} } as unknown as EntryPatch
    const error = asCompositionError(thrownBy(() => composeEntries({ patches: [patch] })))
    expect(error.reason).toBe('invalid-patch')
    expect(error.id).toBe('retry')
    expect(error.patch).toBe('patches[0]')
  })

  test('an unknown patch field (a typo) is an invalid-patch CompositionError, not a silent no-op', () => {
    const patch = { id: 'retry', disabld: true } as unknown as EntryPatch
    const error = asCompositionError(thrownBy(() => composeEntries({ patches: [patch] })))
    expect(error).toMatchObject({ reason: 'invalid-patch', id: 'retry', patch: 'patches[0]' })
    expect(error.message).toContain('"disabld"')
  })
})

describe('insert, place and swap', () => {
  test('an inserted entry sits before its anchor and later patches see it', () => {
    const audit = definePlugin({ name: 'audit', apply() {} })
    const entries = composeEntries({
      patches: [
        { id: 'audit', plugin: audit, before: 'agent-loop' },
        { id: 'audit', merge: { level: 2 } },
      ],
    })
    const ids = entries.map((item) => item.id)
    expect(ids).toEqual([
      'session',
      'persistence',
      'model',
      'tools',
      'system-prompt',
      'audit',
      'agent-loop',
      'retry',
      'compaction',
    ])
    const inserted = entry(entries, 'audit')
    expect(inserted.source).toBe('patches[0]')
    expect(inserted.config).toEqual({ level: 2 })
    expect(inserted.patchedBy).toEqual(['patches[1]'])
    expect(inserted.plugin).toBe(audit)
  })

  test('after places right after the anchor; neither places at the end', () => {
    const entries = composeEntries({
      plugins: [metrics],
      patches: [
        { id: 'first', plugin: metrics, after: 'session' },
        { id: 'last', plugin: metrics },
        { id: 'end-of-list', plugin: metrics, after: 'last' },
      ],
    })
    expect(entries.map((item) => item.id)).toEqual([
      'session',
      'first',
      'persistence',
      'model',
      'tools',
      'system-prompt',
      'agent-loop',
      'retry',
      'compaction',
      'metrics',
      'last',
      'end-of-list',
    ])
    expect(entries.map((item) => item.source).slice(-3)).toEqual(['plugins[0]', 'patches[1]', 'patches[2]'])
  })

  test('a plugin patch on an existing id swaps it in place and replaces the config', () => {
    const replacement = definePlugin({ name: 'better-retry', apply() {} })
    const entries = composeEntries({
      plugins: [{ plugin: metrics, config: { level: 1 } }],
      patches: [
        { id: 'retry', plugin: replacement, config: { attempts: 3 } },
        { id: 'metrics', plugin: replacement },
      ],
    })
    const ids = entries.map((item) => item.id)
    expect(ids).toEqual([...defaultIds, 'metrics'])
    const retry = entry(entries, 'retry')
    expect(retry.plugin).toBe(replacement)
    expect(retry.config).toEqual({ attempts: 3 })
    expect(retry.source).toBe('default')
    expect(retry.patchedBy).toEqual(['patches[0]'])
    const swapped = entry(entries, 'metrics')
    expect(swapped.plugin).toBe(replacement)
    expect(swapped.config).toBeUndefined()
    expect(describeHarness({ patches: [{ id: 'retry', plugin: replacement }] }).entries[6]).toMatchObject({
      id: 'retry',
      name: 'better-retry',
    })
  })

  test('an inserted entry may start disabled', () => {
    const entries = describeHarness({ patches: [{ id: 'audit', plugin: metrics, disabled: true }] }).entries
    expect(entries.at(-1)).toMatchObject({ id: 'audit', disabled: true, startIndex: null, source: 'patches[0]' })
  })

  test('before together with after is an invalid-patch CompositionError', () => {
    const patch = { id: 'audit', plugin: metrics, before: 'retry', after: 'model' } as unknown as EntryPatch
    const error = asCompositionError(thrownBy(() => composeEntries({ patches: [patch] })))
    expect(error.reason).toBe('invalid-patch')
    expect(error.id).toBe('audit')
  })

  test('an inserted id must be valid', () => {
    const error = asCompositionError(thrownBy(() => composeEntries({ patches: [{ id: 'Audit', plugin: metrics }] })))
    expect(error.reason).toBe('invalid-id')
    expect(error.id).toBe('Audit')
    expect(error.patch).toBe('patches[0]')
  })
})

describe('unknown ids', () => {
  test('a patch naming an unknown id rejects UnknownEntryError; no plugin code ran', async () => {
    const apply = vi.fn()
    const constructed = vi.fn()
    class Spy {
      constructor() {
        constructed()
      }
      apply(): void {
        apply()
      }
    }
    const spyDefinition = definePlugin({ name: 'spy-definition', apply })
    const options: HarnessOptions = {
      plugins: [Spy, spyDefinition],
      patches: [
        { id: 'retry', disabled: true },
        { id: 'compactor', config: {} },
      ],
      logger: recordingLogger(),
    }
    const error = asUnknownEntry(await rejectionOf(createHarness(options)))
    expect(error.id).toBe('compactor')
    expect(error.patch).toBe('patches[1]')
    expect(error.knownIds).toContain('compaction')
    expect(error.knownIds).toEqual([...defaultIds, 'spy', 'spy-definition'])
    expect(error.message).toBe(
      `patch patches[1] targets entry "compactor", which does not exist (known: ${[...defaultIds, 'spy', 'spy-definition'].join(', ')})`,
    )
    expect(apply).not.toHaveBeenCalled()
    expect(constructed).not.toHaveBeenCalled()
    const sync = asUnknownEntry(thrownBy(() => describeHarness(options)))
    expect(sync.id).toBe('compactor')
  })

  test('a before/after naming an unknown id is an UnknownEntryError too', () => {
    const error = asUnknownEntry(
      thrownBy(() => composeEntries({ patches: [{ id: 'audit', plugin: metrics, after: 'nowhere' }] })),
    )
    expect(error.id).toBe('nowhere')
    expect(error.patch).toBe('patches[0]')
    expect(error.knownIds).toEqual([...defaultIds])
  })

  test('knownIds include entries inserted by earlier patches', () => {
    const error = asUnknownEntry(
      thrownBy(() =>
        composeEntries({
          patches: [
            { id: 'audit', plugin: metrics },
            { id: 'auditor', disabled: true },
          ],
        }),
      ),
    )
    expect(error.knownIds).toEqual([...defaultIds, 'audit'])
  })

  test('before/after without a plugin is an invalid patch', () => {
    const patch = { id: 'retry', before: 'model' } as unknown as EntryPatch
    const error = asCompositionError(thrownBy(() => composeEntries({ patches: [patch] })))
    expect(error.reason).toBe('invalid-patch')
  })
})

describe('bad options (options objects → InvalidOptionsError)', () => {
  test.each([
    ['null', null, []],
    ['a number', 42, []],
    ['an array', [], []],
    ['plugins that are not an array', { plugins: 42 }, ['plugins']],
    ['an unknown key', { plugin: [metrics] }, ['plugin']],
  ])('%s is an InvalidOptionsError, as describeHarness gives', (_label, options, path) => {
    const error = thrownBy(() => composeEntries(options as never))
    expect(InvalidOptionsError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'INVALID_OPTIONS', issues: [{ path }] })
    expect(thrownBy(() => describeHarness(options as never))).toMatchObject({
      code: 'INVALID_OPTIONS',
      issues: [{ path }],
    })
  })
})

describe('purity', () => {
  test('deep-frozen options compose deterministically without running plugin code or mutating anything', () => {
    const apply = vi.fn()
    const constructed = vi.fn()
    class Audit {
      static inject = ['test/a']
      constructor() {
        constructed()
      }
      apply(): void {
        apply()
      }
    }
    const provider = definePlugin({ name: 'provider', provides: ['test/a'], apply })
    const options: HarnessOptions = deepFreeze({
      plugins: [provider, { id: 'audit', plugin: Audit, config: { level: 1, nested: { keep: true }, list: [1] } }],
      patches: [
        { id: 'audit', merge: { nested: { added: 2 }, list: [2] } },
        { id: 'retry', disabled: true },
        { id: 'inserted', plugin: Audit, before: 'compaction', config: { a: 1 } },
        { id: 'model', config: { name: 'x' } },
      ],
    })
    const saved = cloneOptions(options)
    const first = composeEntries(options)
    const second = composeEntries(options)
    expect(second).toEqual(first)
    expect(second).not.toBe(first)
    expect(entry(first, 'audit').config).toEqual({ level: 1, nested: { keep: true, added: 2 }, list: [2] })
    expect(describeHarness(options)).toEqual(describeHarness(options))
    expect(apply).not.toHaveBeenCalled()
    expect(constructed).not.toHaveBeenCalled()
    expect(options).toStrictEqual(saved)
  })

  test('the composed entries are frozen', () => {
    const entries = composeEntries({ plugins: [metrics] })
    expect(entries.every((item) => Object.isFrozen(item) && Object.isFrozen(item.patchedBy))).toBe(true)
  })
})
