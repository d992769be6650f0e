/**
 * The plugin guide's example (docs/kernel.md): a counter service with an owner-bound facade, a
 * typed event, a config schema, a dependent plugin, and clean teardown.
 *
 * Run: `npm run example -- kernel-plugin`
 */
import { z } from 'zod'
import {
  bindOwner,
  type Context,
  createHarness,
  defineEvents,
  definePlugin,
  defineService,
  type Disposer,
  type Serial,
} from 'yoke'

/** What each plugin sees: registrations are undone when that plugin stops. */
interface Counters {
  track(name: string): Disposer
  names(): string[]
}

declare module 'yoke' {
  interface YokeEvents {
    'counters/limit': Serial<{ readonly name: string; readonly count: number }, boolean>
  }
}

const counterEvents = defineEvents<{
  'counters/limit': Serial<{ readonly name: string; readonly count: number }, boolean>
}>({ 'counters/limit': 'serial' })

const CountersKey = defineService<Counters>('example/counters', 'named counters')

const counters = definePlugin({
  name: 'counters',
  provides: [CountersKey],
  events: [counterEvents],
  config: z.object({ max: z.number().int().positive().default(3) }),
  apply(ctx, config) {
    const tracked = new Set<string>()
    const service = {
      names: () => [...tracked],
      track: (name: string) => {
        throw new Error(`track(${name}) must go through ctx.get(), which binds an owner`)
      },
      [bindOwner]: (owner: Context): Counters => ({
        names: () => [...tracked],
        track: (name) =>
          owner.effect(() => {
            tracked.add(name)
            return () => {
              tracked.delete(name)
            }
          }, `counter:${name}`),
      }),
    }
    ctx.provide(CountersKey, service)
    console.log(`counters started (max ${config.max})`)
  },
})

const billing = definePlugin({
  name: 'billing',
  inject: [CountersKey],
  async apply(ctx) {
    const tracked = ctx.get(CountersKey)
    tracked.track('invoices')
    tracked.track('refunds')
    console.log(`billing tracks ${tracked.names().join(', ')}`)
    ctx.on('counters/limit', ({ name, count }) => (name === 'invoices' ? count < 5 : undefined))
  },
})

const harness = await createHarness({
  plugins: [billing, counters],
  patches: [{ id: 'counters', merge: { max: 5 } }],
})
const started = harness.describe().entries.filter((entry) => entry.startIndex !== null && entry.source !== 'default')
started.sort((left, right) => (left.startIndex ?? 0) - (right.startIndex ?? 0))
console.log('start order:', started.map((entry) => entry.id).join(' → '))
const allowed = await harness.ctx.serial('counters/limit', { name: 'invoices', count: 7 })
console.log(`may invoices reach 7? ${allowed ?? 'no opinion'}`)
const inspection = harness.inspect()
console.log('billing state:', inspection.plugins.find((plugin) => plugin.id === 'billing')?.state)
await harness.close()
console.log('closed; every counter registration was undone with its plugin')
