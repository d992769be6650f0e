/**
 * `defineContextAccessor`: how a feature gives every context a `ctx.<name>` getter for its
 * service without the kernel knowing the feature.
 */
import { afterAll, describe, expect, test } from 'vitest'
import { InvalidArgumentError, ServiceMissingError } from 'yoke'
import { defineContextAccessor } from '../../src/kernel/context-accessor.js'
import { Context, createRootContext, defineService } from '../../src/kernel/index.js'
import { thrownBy } from '../helpers/outcomes.js'
import { recordingLogger } from '../helpers/recording-logger.js'

/** A name no feature uses, removed again after the file so other tests see the prototype as it was. */
const name = 'contextAccessorUnderTest'
const key = defineService<{ readonly value: number }>('context-accessor-under-test', 'a service for this test')

/** `ctx[name]`, read through the installed getter. */
function read(ctx: Context): unknown {
  return Reflect.get(ctx, name)
}

afterAll(() => {
  Reflect.deleteProperty(Context.prototype, name)
})

describe('defineContextAccessor', () => {
  test('gives every context a getter that resolves the key, in the context where it is read', async () => {
    defineContextAccessor(name, key)
    const root = createRootContext({ logger: recordingLogger() })
    try {
      const child = root.child('child')
      const service = { value: 1 }
      root.provide(key, service)
      expect(read(root)).toBe(service)
      expect(read(child)).toBe(service)
      expect(Object.keys(root)).not.toContain(name)
    } finally {
      await root.dispose()
    }
  })

  test('an absent service is ServiceMissingError, as ctx.get would throw', async () => {
    defineContextAccessor(name, key)
    const root = createRootContext({ logger: recordingLogger() })
    try {
      expect(ServiceMissingError.is(thrownBy(() => read(root)))).toBe(true)
    } finally {
      await root.dispose()
    }
  })

  test('installing the same name again replaces the getter instead of failing', async () => {
    const other = defineService<{ readonly value: number }>('context-accessor-other', 'a second service')
    defineContextAccessor(name, key)
    defineContextAccessor(name, other)
    const root = createRootContext({ logger: recordingLogger() })
    try {
      const service = { value: 2 }
      root.provide(other, service)
      expect(read(root)).toBe(service)
    } finally {
      await root.dispose()
    }
  })

  test.each(['get', 'provide', 'child', 'on'])('refuses %s, a member of the kernel context, naming it', (member) => {
    const error = thrownBy(() => defineContextAccessor(member, key))
    expect(InvalidArgumentError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', argument: 'name', value: member })
    expect(String((error as Error).message)).toContain(member)
    expect(typeof Reflect.get(Context.prototype, member)).toBe('function')
  })
})
