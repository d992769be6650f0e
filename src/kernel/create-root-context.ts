import { Context } from './context.js'
import { ClockKey, IdsKey, LoggerKey } from './host-keys.js'
import { type Clock, type IdSource, type Logger, randomIds, stderrLogger, systemClock } from './host-services.js'
import { kernelEvents } from './kernel-events.js'
import { KernelState } from './kernel-state.js'
import { checkOptions, hasMethods, type OptionRule, optionRule } from './option-issues.js'
import { addPluginMethod } from './runtime-plugin.js'

// Every context starts run-time plugins (`ctx.plugin()`), a method the plugin layer adds on top of
// the context. Called here, by name, because a bundler drops a module imported only for its effects
// in a package marked free of side effects.
addPluginMethod()

/** Options of {@link createRootContext}. */
export interface RootContextOptions {
  /**
   * The logger every context uses.
   *
   * @default warn and error to stderr, debug and info dropped
   */
  readonly logger?: Logger
  /**
   * The clock.
   *
   * @default the system clock
   */
  readonly clock?: Clock
  /**
   * The id source.
   *
   * @default a random UUID per id
   */
  readonly ids?: IdSource
}

/** The rules of `createRootContext` options (the host services of `createHarness`). */
const optionRules: Readonly<Record<string, OptionRule>> = Object.freeze({
  logger: (value) =>
    hasMethods(value, ['debug', 'info', 'warn', 'error']) ? undefined : 'must be a Logger { debug, info, warn, error }',
  clock: optionRule.clock,
  ids: optionRule.function,
})

/**
 * Builds a bare root context: the kernel catalog and the host services (`clock`, `ids`,
 * `logger`), no plugins. For tests and for embedding the kernel alone; applications use
 * `createHarness()`.
 *
 * @param options - host services to inject
 * @returns the root, labelled `harness`
 * @throws `InvalidOptionsError` for bad options (not an object, an unknown key, a `logger`,
 *   `clock` or `ids` of the wrong shape)
 * @example
 * ```ts
 * const root = createRootContext({ clock: fakeClock() })
 * root.provide(Greeting, 'hello')
 * await root.dispose()
 * ```
 */
export function createRootContext(options: RootContextOptions = {}): Context {
  checkOptions(options, optionRules, '{ logger?, clock?, ids? }', 'createRootContext options')
  const kernel = new KernelState<Context>({
    logger: options.logger ?? stderrLogger(),
    clock: options.clock ?? systemClock(),
    ids: options.ids ?? randomIds(),
  })
  const root = new Context(kernel)
  kernel.root = root
  root.registerEvents(kernelEvents)
  root.provide(ClockKey, kernel.clock)
  root.provide(IdsKey, kernel.ids)
  root.provide(LoggerKey, kernel.logger)
  return root
}
