import { AsyncLocalStorage } from 'node:async_hooks'
import { ErrorCode } from '../errors/codes.js'
import { InitiatorError } from '../errors/initiator-error.js'
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'

/**
 * What an initiator frame records: the agent handle. Structural (`object`) until the `Agent`
 * class lands with the agent loop; the registry then uses `Initiator<Agent>`.
 */
export type InitiatorAgent = object

/**
 * Records which agent started a piece of nested work, so tools,
 * sub-agents and observers attribute it without a global "current agent". Only identity
 * travels; signals are always passed explicitly.
 */
export interface Initiator<A extends object = InitiatorAgent> {
  /**
   * Runs `operation` in a frame of `agent`: `current()` is `agent` inside it and across every
   * asynchronous continuation it starts, until a nested frame shadows it.
   *
   * @param agent - the agent the work is attributed to
   * @param operation - called synchronously; may throw (the throw propagates unchanged)
   * @returns exactly what `operation` returns (a promise stays a promise)
   * @throws {@link InitiatorError} `INITIATOR_CLOSED` once the harness began closing (`operation` is not called);
   *   {@link InvalidArgumentError} for a non-object agent or a non-function operation
   */
  run<T>(agent: A, operation: () => T): T
  /**
   * Runs `operation` outside any frame: `current()` is `undefined` inside it.
   *
   * @param operation - called synchronously; may throw
   * @returns exactly what `operation` returns
   * @throws {@link InvalidArgumentError} for a non-function operation
   */
  runDetached<T>(operation: () => T): T
  /**
   * The agent of the innermost frame.
   *
   * @returns the agent, or `undefined` outside any frame (and inside `runDetached`)
   */
  current(): A | undefined
  /**
   * The agent of the innermost frame, required.
   *
   * @returns the agent
   * @throws {@link InitiatorError} `NO_INITIATOR` outside any frame
   */
  require(): A
}

/** An {@link Initiator} with the control its owner (the agent registry of one harness) keeps. */
export interface InitiatorControl<A extends object = InitiatorAgent> extends Initiator<A> {
  /** `true` once {@link InitiatorControl.close} was called. */
  readonly closed: boolean
  /**
   * Called when harness close begins: from then `run` throws `INITIATOR_CLOSED` without calling
   * its operation. Frames already running finish normally. Idempotent.
   */
  close(): void
  /**
   * Called when harness close ends (after {@link InitiatorControl.close} and once the agents are
   * disposed): releases the async context storage, so a closed harness leaves no per-promise cost
   * behind in the process. From then `current()` is `undefined` everywhere, even inside a frame
   * that is still running, and `runDetached` calls its operation without a frame. Implies
   * `close()`. Idempotent.
   */
  dispose(): void
  /**
   * Runs `operation` in a frame of `agent`, like {@link Initiator.run}, but only for as long as it
   * runs: once the result settles (at once for a value that is not a promise) and no other frame
   * entered this way is still running, the async context storage is switched off again, so the
   * promises created between frames pay no async-hook cost. A frame started by {@link
   * Initiator.run} keeps the storage on for the rest of the harness's life, as before. The loop
   * enters these frames around the code that can read `current()` (tool calls and listeners).
   *
   * @param agent - the agent the work is attributed to
   * @param operation - called synchronously; may throw (the throw propagates unchanged)
   * @returns exactly what `operation` returns
   * @internal
   */
  enter<T>(agent: A, operation: () => T): T
}

interface Frame<A> {
  readonly agent: A | undefined
}

function checkOperation(operation: unknown): void {
  if (typeof operation !== 'function') {
    throw new InvalidArgumentError({
      argument: 'operation',
      reason: 'an initiator operation must be a function',
      value: operation,
    })
  }
}

/**
 * Creates an initiator backed by its own `AsyncLocalStorage`, so two harnesses never see each
 * other's frames. The storage is created on the first frame and released by `dispose()`: an
 * enabled storage adds a slot to every promise the process creates, so one left behind per closed
 * harness would slow every `await` down.
 *
 * @returns the initiator with its `close()` control
 * @example
 * ```ts
 * const initiator = createInitiator()
 * await initiator.run(agent, async () => {
 *   await someTool()
 *   initiator.current() // agent
 * })
 * ```
 */
export function createInitiator<A extends object = InitiatorAgent>(): InitiatorControl<A> {
  let storage: AsyncLocalStorage<Frame<A>> | undefined
  let disposed = false
  const detached: Frame<A> = Object.freeze({ agent: undefined })
  let closed = false
  /** A frame of `run` ran: the storage stays on until `dispose()` (continuations may outlive the operation). */
  let pinned = false
  /** Frames of `enter` still running; the storage is switched off when the last one settles. */
  let entered = 0
  const storageForFrame = (): AsyncLocalStorage<Frame<A>> | undefined => {
    if (disposed) return undefined
    storage ??= new AsyncLocalStorage<Frame<A>>()
    return storage
  }
  const leave = (): void => {
    entered--
    // An enabled storage makes every promise of the process pay an init hook: off while no frame runs.
    if (entered === 0 && !pinned) storage?.disable()
  }
  return Object.freeze({
    get closed() {
      return closed
    },
    run<T>(agent: A, operation: () => T): T {
      if (typeof agent !== 'object' || agent === null) {
        throw new InvalidArgumentError({
          argument: 'agent',
          reason: 'an initiator frame needs an agent handle',
          value: agent,
        })
      }
      checkOperation(operation)
      const frames = closed ? undefined : storageForFrame()
      if (frames === undefined) throw new InitiatorError({ code: ErrorCode.INITIATOR_CLOSED })
      pinned = true
      return frames.run(Object.freeze({ agent }), operation)
    },
    enter<T>(agent: A, operation: () => T): T {
      // The loop's frames belong to turns already running, which finish normally while the harness
      // closes; once the storage is released they run without one.
      const frames = storageForFrame()
      if (frames === undefined) return operation()
      entered++
      let result: T
      try {
        result = frames.run(Object.freeze({ agent }), operation)
      } catch (error) {
        leave()
        throw error
      }
      if (result instanceof Promise) result.then(leave, leave)
      else leave()
      return result
    },
    runDetached<T>(operation: () => T): T {
      checkOperation(operation)
      // While no frame runs (or once disposed) there is no frame to leave: starting the storage
      // would switch it on for good.
      const current = pinned || entered > 0 ? storageForFrame() : undefined
      return current === undefined ? operation() : current.run(detached, operation)
    },
    current(): A | undefined {
      return storage?.getStore()?.agent
    },
    require(): A {
      const agent = storage?.getStore()?.agent
      if (agent === undefined) throw new InitiatorError({ code: ErrorCode.NO_INITIATOR })
      return agent
    },
    close(): void {
      closed = true
    },
    dispose(): void {
      closed = true
      disposed = true
      storage?.disable()
      storage = undefined
    },
  })
}
