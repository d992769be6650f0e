import { type Emit, type Parallel, type Serial, type Waterfall, defineEvents } from 'yoke'
import type { EventMap } from '../../src/kernel/index.js'

/** The payload the test events carry. */
export interface TestPayload {
  readonly n: number
}

/** The events of the test catalog, by name. */
export type TestEventMap = {
  'test/e': Emit<unknown>
  'test/p': Parallel<unknown>
  'test/s': Serial<unknown, unknown>
  'test/w': Waterfall<{ n: number }, unknown>
  'test/status': Emit<unknown>
  'test/inner': Emit<unknown>
  'test/other': Emit<unknown>
}

declare module 'yoke' {
  interface YokeEvents extends TestEventMap {}
}

/** The event catalog the kernel tests register. */
export const testEvents = defineEvents<TestEventMap>({
  'test/e': 'emit',
  'test/p': 'parallel',
  'test/s': 'serial',
  'test/w': 'waterfall',
  'test/status': 'emit',
  'test/inner': 'emit',
  'test/other': 'emit',
})

/** A catalog of just the named entries, for conflict tests. */
export function catalogOf<M extends EventMap>(definitions: { readonly [K in keyof M]: M[K]['mode'] }) {
  return defineEvents<M>(definitions)
}
