import { ErrorCode } from '../errors/codes.js'
import { AgentCreationAbortedError } from '../errors/agent-errors.js'
import { ContextDisposedError } from '../errors/context-disposed-error.js'
import { HarnessClosedError } from '../errors/harness-closed-error.js'
import { PersistenceError } from '../errors/persistence-error.js'
import type { Context } from '../kernel/context.js'
import { PersistenceKey } from '../persistence/persistence-key.js'
import { isStored } from '../persistence/fresh-session-id.js'
import { isSessionId } from '../session/session-header.js'

/**
 * The fused signal of one create or resume: the caller's `signal`,
 * the owner's disposal and harness close, each turned into the error the creation rejects with.
 *
 * @internal
 */
export class CreationSignal {
  readonly #caller: AbortSignal | undefined
  readonly #closing: AbortSignal
  readonly #operation: string
  readonly #owner: Context | undefined

  /**
   * @param caller - the caller's signal, if any
   * @param closing - aborted when harness close begins
   * @param operation - the operation named by {@link HarnessClosedError}
   * @param owner - the owning context, when it is not the agent registry's own
   */
  constructor(caller: AbortSignal | undefined, closing: AbortSignal, operation: string, owner?: Context) {
    this.#caller = caller
    this.#closing = closing
    this.#operation = operation
    this.#owner = owner
  }

  /**
   * Throws when the creation must stop: harness close first, then the owner's disposal, then the
   * caller's abort.
   *
   * @throws {@link HarnessClosedError}; {@link ContextDisposedError} naming the owner;
   *   {@link AgentCreationAbortedError} with the signal's reason
   */
  check(): void {
    if (this.#closing.aborted) throw new HarnessClosedError({ operation: this.#operation })
    if (this.#owner !== undefined && this.#owner.state !== 'active') {
      throw new ContextDisposedError({ context: this.#owner.path, operation: this.#operation })
    }
    if (this.#caller?.aborted === true) throw new AgentCreationAbortedError({ reason: this.#caller.reason })
  }

  /**
   * Awaits `work` raced against both signals: whichever aborts first rejects at once (the work
   * keeps running; the caller undoes what it did).
   *
   * @param work - the setup's promise
   * @returns what `work` resolves with
   * @throws what {@link CreationSignal.check} throws, or what `work` rejects with
   */
  async race<T>(work: Promise<T>): Promise<T> {
    this.check()
    const signals = [
      this.#closing,
      ...(this.#owner === undefined ? [] : [this.#owner.signal]),
      ...(this.#caller === undefined ? [] : [this.#caller]),
    ]
    let stop: (() => void) | undefined
    const aborted = new Promise<never>((_resolve, reject) => {
      const onAbort = (): void => {
        try {
          this.check()
        } catch (error) {
          reject(error)
        }
      }
      for (const signal of signals) signal.addEventListener('abort', onAbort, { once: true })
      stop = () => {
        for (const signal of signals) signal.removeEventListener('abort', onAbort)
      }
    })
    try {
      return await Promise.race([work, aborted])
    } finally {
      stop?.()
    }
  }
}

/**
 * A new agent's id must not have a stored log. Asks persistence `readFrom` for what lies past
 * any seq (no lease, no closers, nothing written): a resolved read means a stored log exists.
 * Skipped without a persistence entry or for an id the session registry will refuse anyway.
 *
 * @param ctx - the agent registry's context
 * @param id - the new agent's id
 * @throws (as a rejection) {@link PersistenceError} `SESSION_EXISTS`; read errors other than
 *   `SESSION_NOT_FOUND` unchanged
 * @internal
 */
export async function assertNotStored(ctx: Context, id: string): Promise<void> {
  if (!isSessionId(id) || !(await isStored(ctx.getOptional(PersistenceKey), id))) return
  throw new PersistenceError({
    code: ErrorCode.SESSION_EXISTS,
    sessionId: id,
    detail: 'a stored session has this id; resume it instead',
  })
}
