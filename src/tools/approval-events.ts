import { z } from 'zod'
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import type { EventTypeOptions } from '../session/session-catalog.js'
import type { SessionRegistry } from '../session/session-registry.js'
import {
  callIdSchema,
  nonEmptyStringSchema,
  positiveSafeIntegerSchema,
  typedSchema,
} from '../session/schema-primitives.js'

/**
 * Data of the durable `approval/asked` event: a call waits for an approval
 * decision. Appended inside the call's step, before `approval/request` is dispatched.
 */
export interface ApprovalAskedEventData {
  /** The approval id, from the harness id source (kind `'approval'`). */
  readonly approvalId: string
  /** The turn number. */
  readonly turn: number
  /** The step number. */
  readonly step: number
  /** The call waiting for the decision. */
  readonly callId: string
  /** The tool's name. */
  readonly toolName: string
  /** The model's raw argument text, verbatim. */
  readonly arguments: string
  /** Why approval was asked (a `tools/pre-execute` `ask` reason). */
  readonly reason?: string
}

/** `approval/decided` data for an allowed call. */
export interface ApprovalAllowedEventData {
  /** The `approvalId` of the matching `approval/asked`. */
  readonly approvalId: string
  /** Always `'allowed'`. */
  readonly outcome: 'allowed'
  /** Who allowed it: an `approval/request` listener or the host (`approve()`). */
  readonly by: 'listener' | 'host'
}

/** `approval/decided` data for a denied call. */
export interface ApprovalDeniedEventData {
  /** The `approvalId` of the matching `approval/asked`. */
  readonly approvalId: string
  /** Always `'denied'`. */
  readonly outcome: 'denied'
  /** Who denied it: a listener, the host, the `'auto'` default, the timeout, or a failed listener. */
  readonly by: 'listener' | 'host' | 'default' | 'timeout' | 'error'
  /** Why (the text after `"<name>" was not approved: `). */
  readonly reason?: string
}

/** `approval/decided` data for an approval the call's signal cancelled. */
export interface ApprovalCancelledEventData {
  /** The `approvalId` of the matching `approval/asked`. */
  readonly approvalId: string
  /** Always `'cancelled'`. */
  readonly outcome: 'cancelled'
  /** Always `'cancel'`. */
  readonly by: 'cancel'
}

/**
 * Data of the durable `approval/decided` event: how an approval ended. Exactly one
 * follows each `approval/asked`, in the same step.
 */
export type ApprovalDecidedEventData = ApprovalAllowedEventData | ApprovalDeniedEventData | ApprovalCancelledEventData

const toolNameMessage = 'must be a tool name (1–64 characters of [A-Za-z0-9_-])'

/** The strict payload schema of `approval/asked`. */
export const approvalAskedEventDataSchema: z.ZodType<ApprovalAskedEventData> = typedSchema<ApprovalAskedEventData>()(
  z.strictObject({
    approvalId: nonEmptyStringSchema,
    turn: positiveSafeIntegerSchema,
    step: positiveSafeIntegerSchema,
    callId: callIdSchema,
    toolName: z.string({ error: toolNameMessage }).regex(/^[A-Za-z0-9_-]{1,64}$/, { error: toolNameMessage }),
    arguments: z.string({ error: 'must be the raw argument text (a string)' }),
    reason: z.string({ error: 'must be a string' }).exactOptional(),
  }),
)

/**
 * The strict payload schema of `approval/decided`: a union on `outcome`, so `by` must fit it
 * (`allowed` by `listener`/`host`, `cancelled` by `cancel`) and only a denial carries a `reason`.
 */
export const approvalDecidedEventDataSchema: z.ZodType<ApprovalDecidedEventData> =
  typedSchema<ApprovalDecidedEventData>()(
    z.discriminatedUnion(
      'outcome',
      [
        z.strictObject({
          approvalId: nonEmptyStringSchema,
          outcome: z.literal('allowed'),
          by: z.enum(['listener', 'host'], { error: "an allowed approval is decided by 'listener' or 'host'" }),
        }),
        z.strictObject({
          approvalId: nonEmptyStringSchema,
          outcome: z.literal('denied'),
          by: z.enum(['listener', 'host', 'default', 'timeout', 'error'], {
            error: "a denied approval is decided by 'listener', 'host', 'default', 'timeout' or 'error'",
          }),
          reason: z.string({ error: 'must be a string' }).exactOptional(),
        }),
        z.strictObject({
          approvalId: nonEmptyStringSchema,
          outcome: z.literal('cancelled'),
          by: z.literal('cancel', { error: "a cancelled approval is decided by 'cancel'" }),
        }),
      ],
      { error: "outcome must be 'allowed', 'denied' or 'cancelled'" },
    ),
  )

/**
 * The durable approval event types, with their schemas and enclosure `'step'` (an open step is
 * required), as {@link registerApprovalEventTypes} registers them.
 *
 * @internal
 */
export const approvalEventTypes: Readonly<Record<'approval/asked' | 'approval/decided', EventTypeOptions>> =
  Object.freeze({
    'approval/asked': Object.freeze({ schema: approvalAskedEventDataSchema, enclosure: 'step' }),
    'approval/decided': Object.freeze({ schema: approvalDecidedEventDataSchema, enclosure: 'step' }),
  })

/**
 * Registers `approval/asked` and `approval/decided` in a harness's session catalog.
 * Both or neither: when the second registration throws, the first is undone. Through a plugin's
 * `ctx.get(services.sessions)` the registrations are effects of that plugin (the `tools` entry).
 *
 * @param sessions - the session registry
 * @returns a function that unregisters both (committed events are untouched)
 * @throws `EventTypeError` `DUPLICATE_EVENT_TYPE` when either type is already registered;
 *   {@link InvalidArgumentError} `argument: 'sessions'` when `sessions` has no `registerEventType`
 * @example
 * ```ts
 * const unregister = registerApprovalEventTypes(ctx.get(services.sessions))
 * ```
 */
export function registerApprovalEventTypes(sessions: SessionRegistry): () => void {
  if (typeof (sessions as { readonly registerEventType?: unknown } | null)?.registerEventType !== 'function') {
    throw new InvalidArgumentError({
      argument: 'sessions',
      reason: 'must be the session registry (with registerEventType)',
      value: sessions,
    })
  }
  const asked = sessions.registerEventType('approval/asked', approvalEventTypes['approval/asked'])
  let decided: () => Promise<void>
  try {
    decided = sessions.registerEventType('approval/decided', approvalEventTypes['approval/decided'])
  } catch (error) {
    void asked()
    throw error
  }
  return () => {
    void decided()
    void asked()
  }
}
