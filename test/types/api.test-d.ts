/**
 * Compile-time tests of the public API's types. Checked by `tsc -p tsconfig.test.json`, never
 * run (vitest's include is `test/**\/*.test.ts`). Every `@ts-expect-error` line must stay an error.
 */
import { expectTypeOf } from 'vitest'
import { z } from 'zod'
import {
  type Context,
  createHarness,
  definePlugin,
  defineService,
  type Harness,
  type PluginDefinition,
  type Serial,
} from 'yoke'
import type { ListenerOf, ResultOf, WaterfallNext } from '../../src/kernel/index.js'
import '../helpers/test-events.js'

/** A typed serial event, so the listener's return type is checkable (the test catalog's are `unknown`). */
declare module 'yoke' {
  interface YokeEvents {
    'types/lookup': Serial<{ readonly id: string }, number>
  }
}

declare const ctx: Context

// --- services ------------------------------------------------------------------------------------

const count = defineService<number>('x/y')
expectTypeOf(ctx.get(count)).toEqualTypeOf<number>()
expectTypeOf(ctx.getOptional(count)).toEqualTypeOf<number | undefined>()
ctx.provide(count, 1)
// @ts-expect-error a number key takes a number
ctx.provide(count, 'one')
// @ts-expect-error the value is not optional
ctx.provide(count)

// --- events: the dispatch method must match the event's mode ---------------------------------------

ctx.emit('test/e', { anything: true })
void ctx.parallel('test/p', null)
void ctx.serial('test/s', null)
void ctx.waterfall('test/w', { n: 1 }, (payload) => payload.n)
// @ts-expect-error 'test/w' is a waterfall event: emit is refused
ctx.emit('test/w', { n: 1 })
// @ts-expect-error 'test/s' is a serial event: emit is refused
ctx.emit('test/s', null)
// @ts-expect-error 'test/e' is an emit event: serial is refused
void ctx.serial('test/e', null)
// @ts-expect-error 'test/e' is an emit event: waterfall is refused
void ctx.waterfall('test/e', null, () => undefined)
// @ts-expect-error an unknown name
ctx.emit('test/none', null)
// @ts-expect-error the waterfall payload is { n: number }
void ctx.waterfall('test/w', { n: 'one' }, () => 1)

// waterfall listeners get the payload and a typed next
ctx.on('test/w', (payload, next) => {
  expectTypeOf(payload).toEqualTypeOf<{ n: number }>()
  expectTypeOf(next).toEqualTypeOf<WaterfallNext<{ n: number }, unknown>>()
  return next({ n: payload.n + 1 })
})

// --- serial listeners: the result type --------------------------------------------------------------

expectTypeOf<ResultOf<'types/lookup'>>().toEqualTypeOf<number>()
expectTypeOf<ReturnType<ListenerOf<'types/lookup'>>>().toEqualTypeOf<number | undefined | Promise<number | undefined>>()
expectTypeOf(ctx.serial('types/lookup', { id: 'a' })).toEqualTypeOf<Promise<number | undefined>>()
ctx.on('types/lookup', (payload) => payload.id.length)
ctx.on('types/lookup', async () => undefined)
// @ts-expect-error a serial listener of a number result cannot return a string
ctx.on('types/lookup', () => 'text')
// @ts-expect-error the payload has no `name`
ctx.on('types/lookup', (payload) => payload.name)
// @ts-expect-error the payload must have an id
void ctx.serial('types/lookup', {})

// --- plugins ------------------------------------------------------------------------------------------

const ledger = definePlugin({
  name: 'ledger',
  config: z.object({ currency: z.string().default('EUR'), limit: z.number().optional() }),
  apply(pluginContext, config) {
    expectTypeOf(pluginContext).toEqualTypeOf<Context>()
    expectTypeOf(config).toEqualTypeOf<{ currency: string; limit?: number | undefined }>()
    // @ts-expect-error the config has no `missing` field
    config.missing
  },
})
expectTypeOf(ledger).toEqualTypeOf<PluginDefinition<{ currency: string; limit?: number | undefined }>>()

const plain = definePlugin({
  name: 'plain',
  apply(_pluginContext, config) {
    expectTypeOf(config).toEqualTypeOf<undefined>()
  },
})

class Counter {
  static readonly pluginName = 'counter'
  static readonly config = z.object({ start: z.number() })
  readonly start: number

  constructor(_pluginContext: Context, config: { start: number }) {
    this.start = config.start
  }

  apply(pluginContext: Context, config: { start: number }): void {
    pluginContext.provide(count, config.start + this.start)
  }
}

expectTypeOf(createHarness({ plugins: [ledger, plain, Counter] })).toEqualTypeOf<Promise<Harness>>()
void createHarness({ plugins: [{ id: 'second-ledger', plugin: ledger, config: { currency: 'USD' } }] })
// @ts-expect-error a number is not a plugin
void createHarness({ plugins: [42] })
// @ts-expect-error a string is not a plugin
void createHarness({ plugins: ['ledger'] })
// @ts-expect-error a class without apply is not a plugin
void createHarness({ plugins: [class NotAPlugin {}] })
// @ts-expect-error definePlugin needs an apply
definePlugin({ name: 'broken' })
