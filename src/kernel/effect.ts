import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import type { KernelErrorPhase } from './kernel-events.js'

/** Undoes what an effect's setup did. May be async; a rejection is a teardown error. */
export type Cleanup = () => void | Promise<void>

/** Sets an effect up; returns nothing, a {@link Cleanup}, or a promise of either. */
export type EffectSetup = () => void | Cleanup | Promise<void | Cleanup>

/**
 * Undoes one effect. Idempotent: every call returns the same promise. A directly called disposer
 * rejects with its cleanup's error (unreported); in a context's teardown the error is collected.
 */
export interface Disposer {
  /** Starts the cleanup (once) and returns its promise. */
  (): Promise<void>
  /** `true` once teardown of this effect has begun. */
  readonly disposed: boolean
  /** The effect's label, as shown by `inspect()`. */
  readonly label: string
  /** Settles when the setup has settled; rejects with an async setup's error. */
  readonly ready: Promise<void>
}

/** What an effect node is, in `inspect().effects`. */
export type EffectKind = 'context' | 'plugin' | 'service' | 'listener' | 'events' | 'scope-link' | 'effect'

/** @internal What an effect record needs from the context that holds it. */
export interface EffectHost {
  detach(record: EffectRecord): void
  track(promise: Promise<void>): void
  report(error: unknown, phase: KernelErrorPhase, label: string): void
}

type MutableDisposer = (() => Promise<void>) & { disposed: boolean; label: string; ready: Promise<void> }

const noop = (): void => {}
const resolved = Promise.resolve()

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  )
}

function invalidResult(value: unknown): InvalidArgumentError {
  return new InvalidArgumentError({
    argument: 'effect result',
    reason: `an effect setup must return nothing, a cleanup function or a promise of either (got ${typeof value})`,
    value,
  })
}

/** @internal One registered effect: its cleanup, its disposer and its place in a context. */
export class EffectRecord {
  readonly label: string
  readonly kind: EffectKind
  readonly disposer: Disposer
  /** The child context this effect stands for (kinds `context` and `plugin`). */
  child: { dispose(): Promise<unknown> } | undefined
  /** Children shown under this node by `inspect()`. */
  inspectChildren: (() => readonly EffectRecord[]) | undefined
  #host: EffectHost
  #cleanup: Cleanup | undefined
  #setup: Promise<void> | undefined
  #promise: Promise<void> | undefined
  #disposer: MutableDisposer

  constructor(host: EffectHost, label: string, kind: EffectKind, cleanup?: Cleanup) {
    this.#host = host
    this.label = label
    this.kind = kind
    this.#cleanup = cleanup
    // Plain data properties, kept in step with the record: far cheaper to create than getters.
    const disposer = (() => this.#runDirect()) as MutableDisposer
    disposer.disposed = false
    disposer.label = label
    disposer.ready = resolved
    this.#disposer = disposer
    this.disposer = disposer
  }

  /**
   * Runs `setup` synchronously and builds the record from what it returned: nothing, a cleanup or
   * a promise of either (an async setup is registered at once and its cleanup runs once it settles).
   * Throws what the setup threw, or an InvalidArgumentError for a bad result; registers nothing then.
   */
  static fromSetup(host: EffectHost, label: string, kind: EffectKind, setup: EffectSetup): EffectRecord {
    if (typeof setup !== 'function') {
      throw new InvalidArgumentError({ argument: 'setup', reason: 'an effect setup must be a function', value: setup })
    }
    const result: unknown = setup()
    if (result === undefined) return new EffectRecord(host, label, kind)
    if (typeof result === 'function') return new EffectRecord(host, label, kind, result as Cleanup)
    if (!isThenable(result)) throw invalidResult(result)
    const record = new EffectRecord(host, label, kind)
    record.#adoptAsyncSetup(result)
    return record
  }

  /** `true` once teardown has begun, by any path. */
  get started(): boolean {
    return this.#promise !== undefined
  }

  #adoptAsyncSetup(result: PromiseLike<unknown>): void {
    let settle: () => void = noop
    this.#setup = new Promise<void>((resolve) => {
      settle = resolve
    })
    const ready = Promise.resolve(result).then((value) => {
      if (value !== undefined && typeof value !== 'function') throw invalidResult(value)
      this.#cleanup = value as Cleanup | undefined
    })
    this.#disposer.ready = ready
    ready.then(settle, (error: unknown) => {
      this.#cleanup = undefined
      if (this.#promise === undefined) {
        this.#promise = resolved
        this.#disposer.disposed = true
        this.#host.detach(this)
      }
      this.#host.report(error, 'effect-setup', this.label)
      settle()
    })
    ready.catch(noop)
  }

  /** Starts the teardown (once) and returns its promise, which may reject. */
  run(): Promise<void> {
    if (this.#promise !== undefined) return this.#promise
    this.#host.detach(this)
    const promise = this.#setup === undefined ? this.#execute() : this.#setup.then(() => this.#execute())
    this.#promise = promise
    this.#disposer.disposed = true
    promise.catch(noop)
    return promise
  }

  #runDirect(): Promise<void> {
    if (this.#promise !== undefined) return this.#promise
    const promise = this.run()
    this.#host.track(promise)
    return promise
  }

  #execute(): Promise<void> {
    const cleanup = this.#cleanup
    this.#cleanup = undefined
    if (cleanup === undefined) return resolved
    try {
      return Promise.resolve(cleanup())
    } catch (error) {
      return Promise.reject(error)
    }
  }
}
