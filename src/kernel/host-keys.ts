import type { Clock, IdSource, Logger } from './host-services.js'
import { defineService, type ServiceKey } from './service-key.js'

/** The key of the harness clock, provided on the root before any plugin starts. */
export const ClockKey: ServiceKey<Clock> = defineService<Clock>('clock', 'the harness clock')

/** The key of the harness id source, provided on the root before any plugin starts. */
export const IdsKey: ServiceKey<IdSource> = defineService<IdSource>('ids', 'the harness id source')

/** The key of the harness logger, provided on the root before any plugin starts. */
export const LoggerKey: ServiceKey<Logger> = defineService<Logger>('logger', 'the harness logger')

/**
 * @internal The keys every root provides itself before any plugin starts, so no entry may provide
 * them. A harness adds the keys it provides on its root to these when it plans its entries.
 */
export const hostKeyNames: ReadonlySet<string> = new Set([ClockKey.name, IdsKey.name, LoggerKey.name])
