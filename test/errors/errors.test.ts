import { describe, expect, test, vi } from 'vitest'
import * as errors from '../../src/errors/index.js'
import { ErrorCode, HarnessError } from 'yoke'

type ErrorsModule = typeof errors

/** The name of every error class the errors module exports. */
type ClassName = {
  [K in keyof ErrorsModule]: ErrorsModule[K] extends { readonly brand: string } ? K : never
}[keyof ErrorsModule]

/** What the tests need from an error class: its brand, `is()` and `instanceof`. */
interface ErrorClass {
  new (...args: never[]): HarnessError
  readonly brand: string
  is(value: unknown): boolean
}

interface ErrorCase {
  /** Builds the error with the classes of `module`; `cause` is passed when the class accepts one. */
  readonly create: (module: ErrorsModule, cause?: unknown) => HarnessError
  readonly code: ErrorCode
  /** The structured fields, compared with `toEqual`. */
  readonly fields: Readonly<Record<string, unknown>>
  /** Substrings the message must contain (the offending values). */
  readonly mentions: readonly string[]
  /** Ancestor classes between the class and HarnessError, nearest first. */
  readonly parents: readonly ClassName[]
  /** A class whose `is()` must be false for this error. */
  readonly sibling: ClassName
  /** Whether the constructor takes a `cause` option. */
  readonly takesCause: boolean
}

const rollbackFailure = new Error('rollback failed')
const closeFailure = new Error('flush failed')
const startFailure = new Error('database is down')
const scopeKey = { id: 'agent-7' }
const creationAbortReason = { kind: 'deadline' }

const cases: Readonly<Record<ClassName, ErrorCase>> = {
  HarnessError: {
    create: (module, cause) =>
      new module.HarnessError(module.ErrorCode.CONFIG_INVALID, 'value "42" is not usable', optionsWithCause(cause)),
    code: ErrorCode.CONFIG_INVALID,
    fields: {},
    mentions: ['"42"'],
    parents: [],
    sibling: 'ConfigError',
    takesCause: true,
  },
  InvalidArgumentError: {
    create: (module, cause) =>
      new module.InvalidArgumentError({
        argument: 'label',
        reason: 'a context label must not contain "/" (got "a/b")',
        value: 'a/b',
        ...withCause(cause),
      }),
    code: ErrorCode.INVALID_ARGUMENT,
    fields: { argument: 'label', reason: 'a context label must not contain "/" (got "a/b")', value: 'a/b' },
    mentions: ['label', '"a/b"'],
    parents: [],
    sibling: 'ConfigError',
    takesCause: true,
  },
  ContextDisposedError: {
    create: (module) => new module.ContextDisposedError({ context: 'harness/worker#2', operation: 'provide' }),
    code: ErrorCode.CONTEXT_DISPOSED,
    fields: { context: 'harness/worker#2', operation: 'provide' },
    mentions: ['"harness/worker#2"', 'provide'],
    parents: [],
    sibling: 'HarnessClosedError',
    takesCause: false,
  },
  ServiceConflictError: {
    create: (module) =>
      new module.ServiceConflictError({
        key: 'acme/ledger',
        existingProvider: 'harness/ledger',
        attemptedProvider: 'harness/other',
      }),
    code: ErrorCode.SERVICE_CONFLICT,
    fields: { key: 'acme/ledger', existingProvider: 'harness/ledger', attemptedProvider: 'harness/other' },
    mentions: ['"acme/ledger"', '"harness/ledger"', '"harness/other"'],
    parents: [],
    sibling: 'ServiceMissingError',
    takesCause: false,
  },
  ServiceMissingError: {
    create: (module) =>
      new module.ServiceMissingError({ key: 'acme/ledger', requestedBy: 'harness/billing', owner: 'billing' }),
    code: ErrorCode.SERVICE_MISSING,
    fields: { key: 'acme/ledger', requestedBy: 'harness/billing', owner: 'billing' },
    mentions: ['service "acme/ledger" is not provided (requested by "harness/billing")'],
    parents: [],
    sibling: 'MissingServicesError',
    takesCause: false,
  },
  MissingServicesError: {
    create: (module) =>
      new module.MissingServicesError({
        missing: [
          { plugin: 'billing', key: 'acme/ledger', disabledProvider: 'ledger' },
          { plugin: 'reports', key: 'acme/store' },
        ],
      }),
    code: ErrorCode.SERVICES_MISSING,
    fields: {
      missing: [
        { plugin: 'billing', key: 'acme/ledger', disabledProvider: 'ledger' },
        { plugin: 'reports', key: 'acme/store' },
      ],
    },
    mentions: ['"billing" needs "acme/ledger"', '"ledger" is disabled', '"reports" needs "acme/store"'],
    parents: [],
    sibling: 'ServiceMissingError',
    takesCause: false,
  },
  UnknownEventError: {
    create: (module) => new module.UnknownEventError({ event: 'acme/nope' }),
    code: ErrorCode.UNKNOWN_EVENT,
    fields: { event: 'acme/nope' },
    mentions: ['"acme/nope"'],
    parents: [],
    sibling: 'EventModeError',
    takesCause: false,
  },
  EventModeError: {
    create: (module) => new module.EventModeError({ event: 'acme/tick', defined: 'waterfall', attempted: 'emit' }),
    code: ErrorCode.EVENT_MODE_MISMATCH,
    fields: { event: 'acme/tick', defined: 'waterfall', attempted: 'emit' },
    mentions: ['"acme/tick"', '"waterfall"', '"emit"'],
    parents: [],
    sibling: 'EventConflictError',
    takesCause: false,
  },
  EventConflictError: {
    create: (module) =>
      new module.EventConflictError({ event: 'acme/tick', existing: 'serial', attempted: 'parallel' }),
    code: ErrorCode.EVENT_CONFLICT,
    fields: { event: 'acme/tick', existing: 'serial', attempted: 'parallel' },
    mentions: ['"acme/tick"', '"serial"', '"parallel"'],
    parents: [],
    sibling: 'EventModeError',
    takesCause: false,
  },
  WaterfallNextError: {
    create: (module) => new module.WaterfallNextError({ event: 'acme/render', reason: 'called-twice' }),
    code: ErrorCode.WATERFALL_NEXT,
    fields: { event: 'acme/render', reason: 'called-twice' },
    mentions: ['"acme/render"', 'called twice'],
    parents: [],
    sibling: 'UnknownEventError',
    takesCause: false,
  },
  ScopeLinkError: {
    create: (module) => new module.ScopeLinkError({ reason: 'cycle', key: scopeKey }),
    code: ErrorCode.SCOPE_LINK,
    fields: { reason: 'cycle', key: scopeKey },
    mentions: ['"agent-7"', 'cycle'],
    parents: [],
    sibling: 'InvalidArgumentError',
    takesCause: false,
  },
  InvalidPluginError: {
    create: (module) =>
      new module.InvalidPluginError({ plugin: 'ledger', field: 'apply', reason: 'must be a function' }),
    code: ErrorCode.INVALID_PLUGIN,
    fields: { plugin: 'ledger', field: 'apply' },
    mentions: ['plugin "ledger" has an invalid apply: must be a function'],
    parents: [],
    sibling: 'PluginConfigError',
    takesCause: false,
  },
  PluginConfigError: {
    create: (module) =>
      new module.PluginConfigError({
        plugin: 'ledger',
        issues: [
          { path: ['limits', 0, 'currency'], message: 'expected a string' },
          { path: [], message: 'too many keys' },
        ],
      }),
    code: ErrorCode.PLUGIN_CONFIG_INVALID,
    fields: {
      plugin: 'ledger',
      issues: [
        { path: ['limits', 0, 'currency'], message: 'expected a string' },
        { path: [], message: 'too many keys' },
      ],
    },
    mentions: ['"ledger"', 'limits[0].currency: expected a string'],
    parents: [],
    sibling: 'InvalidPluginError',
    takesCause: false,
  },
  PluginCycleError: {
    create: (module) => new module.PluginCycleError({ cycle: ['billing', 'ledger', 'billing'] }),
    code: ErrorCode.PLUGIN_CYCLE,
    fields: { cycle: ['billing', 'ledger', 'billing'] },
    mentions: ['billing -> ledger -> billing'],
    parents: [],
    sibling: 'PluginStartError',
    takesCause: false,
  },
  PluginStartError: {
    create: (module, cause) =>
      new module.PluginStartError({
        plugin: 'acme-ledger',
        pluginName: 'AcmeLedger',
        cause: cause ?? startFailure,
        rollbackErrors: [{ label: 'service:acme/ledger', error: rollbackFailure }],
        inspection: { plugins: ['acme-ledger'] },
      }),
    code: ErrorCode.PLUGIN_START_FAILED,
    fields: {
      plugin: 'acme-ledger',
      pluginName: 'AcmeLedger',
      rollbackErrors: [{ label: 'service:acme/ledger', error: rollbackFailure }],
      inspection: { plugins: ['acme-ledger'] },
    },
    mentions: ['"acme-ledger"'],
    parents: [],
    sibling: 'PluginConfigError',
    takesCause: true,
  },
  CompositionError: {
    create: (module) =>
      new module.CompositionError({
        reason: 'duplicate-id',
        id: 'ledger',
        patch: 'plugins[2]',
        detail: 'also plugins[0]',
      }),
    code: ErrorCode.COMPOSITION_INVALID,
    fields: { reason: 'duplicate-id', id: 'ledger', patch: 'plugins[2]' },
    mentions: ['plugins[2]', 'duplicate-id', '"ledger"', 'also plugins[0]'],
    parents: [],
    sibling: 'UnknownEntryError',
    takesCause: false,
  },
  UnknownEntryError: {
    create: (module) =>
      new module.UnknownEntryError({ id: 'compactor', patch: 'patches[1]', knownIds: ['session', 'compaction'] }),
    code: ErrorCode.UNKNOWN_ENTRY,
    fields: { id: 'compactor', patch: 'patches[1]', knownIds: ['session', 'compaction'] },
    mentions: ['patch patches[1] targets entry "compactor", which does not exist (known: session, compaction)'],
    parents: [],
    sibling: 'CompositionError',
    takesCause: false,
  },
  ConfigError: {
    create: (module, cause) =>
      new module.ConfigError({
        option: 'persistence.dir',
        value: '/tmp/file',
        reason: 'is a file',
        ...withCause(cause),
      }),
    code: ErrorCode.CONFIG_INVALID,
    fields: { option: 'persistence.dir', value: '/tmp/file', reason: 'is a file' },
    mentions: ['persistence.dir', 'is a file'],
    parents: [],
    sibling: 'InvalidOptionsError',
    takesCause: true,
  },
  InvalidOptionsError: {
    create: (module) =>
      new module.InvalidOptionsError({
        issues: [
          { path: ['maxParallelToolCalls'], message: 'must be a positive integer' },
          { path: ['clock'], message: 'must be a Clock' },
        ],
        value: 0,
      }),
    code: ErrorCode.INVALID_OPTIONS,
    fields: {
      field: 'maxParallelToolCalls',
      option: 'maxParallelToolCalls',
      value: 0,
      reason: 'must be a positive integer',
      issues: [
        { path: ['maxParallelToolCalls'], message: 'must be a positive integer' },
        { path: ['clock'], message: 'must be a Clock' },
      ],
    },
    mentions: ['options.maxParallelToolCalls: must be a positive integer (and 1 more)'],
    parents: ['ConfigError'],
    sibling: 'PluginConfigError',
    takesCause: false,
  },
  HarnessClosedError: {
    create: (module) => new module.HarnessClosedError({ operation: 'createAgent' }),
    code: ErrorCode.HARNESS_CLOSED,
    fields: { operation: 'createAgent' },
    mentions: ['createAgent'],
    parents: [],
    sibling: 'HarnessCloseError',
    takesCause: false,
  },
  HarnessCloseError: {
    create: (module) =>
      new module.HarnessCloseError({
        errors: [
          { label: 'plugin:session', error: closeFailure },
          { label: 'effect', error: 'plain string' },
        ],
        unflushedSessions: ['s1'],
      }),
    code: ErrorCode.CLOSE_FAILED,
    fields: {
      errors: [
        { label: 'plugin:session', error: closeFailure },
        { label: 'effect', error: 'plain string' },
      ],
      unflushedSessions: ['s1'],
    },
    mentions: ['2 place(s)', 'plugin:session', 'flush failed'],
    parents: [],
    sibling: 'HarnessClosedError',
    takesCause: false,
  },
  MissingPeerError: {
    create: (module, cause) =>
      new module.MissingPeerError({
        peer: 'better-sqlite3',
        subpath: 'yoke/sqlite',
        install: 'npm install better-sqlite3@12',
        ...withCause(cause),
      }),
    code: ErrorCode.MISSING_PEER,
    fields: { peer: 'better-sqlite3', subpath: 'yoke/sqlite', install: 'npm install better-sqlite3@12' },
    mentions: ['yoke/sqlite', '"better-sqlite3"', 'npm install better-sqlite3@12'],
    parents: [],
    sibling: 'ConfigError',
    takesCause: true,
  },
  SessionError: {
    create: (module, cause) =>
      new module.SessionError({
        code: module.ErrorCode.SESSION_DISPOSED,
        sessionId: 's1',
        type: 'user/message',
        seq: 4,
        detail: 'the session is disposed',
        ...withCause(cause),
      }),
    code: ErrorCode.SESSION_DISPOSED,
    fields: { sessionId: 's1', type: 'user/message', seq: 4, index: undefined },
    mentions: ['session "s1": user/message at seq 4: the session is disposed'],
    parents: [],
    sibling: 'ConfigError',
    takesCause: true,
  },
  SessionEventError: {
    create: (module, cause) =>
      new module.SessionEventError({
        code: module.ErrorCode.INVALID_PAYLOAD,
        sessionId: 's1',
        type: 'user/message',
        index: 2,
        detail: 'data.text must be a string (got 42)',
        path: 'data.text',
        reason: 'expected string',
        issues: [{ path: ['data', 'text'], message: 'expected string' }],
        ...withCause(cause),
      }),
    code: ErrorCode.INVALID_PAYLOAD,
    fields: {
      sessionId: 's1',
      type: 'user/message',
      index: 2,
      path: 'data.text',
      reason: 'expected string',
      issues: [{ path: ['data', 'text'], message: 'expected string' }],
    },
    mentions: ['session "s1": user/message at seed index 2: data.text must be a string (got 42)'],
    parents: ['SessionError'],
    sibling: 'SurfaceError',
    takesCause: true,
  },
  SurfaceError: {
    create: (module, cause) =>
      new module.SurfaceError({
        code: module.ErrorCode.REPLACE_UNCOVERED,
        sessionId: 's2',
        seq: 9,
        detail: 'the replace shadows seqs 2, 3 that sourceEventSeqs does not list',
        field: 'sourceEventSeqs',
        missing: [2, 3],
        ...withCause(cause),
      }),
    code: ErrorCode.REPLACE_UNCOVERED,
    fields: { sessionId: 's2', seq: 9, field: 'sourceEventSeqs', missing: [2, 3] },
    mentions: ['session "s2"', 'at seq 9', 'seqs 2, 3'],
    parents: ['SessionError'],
    sibling: 'StructureError',
    takesCause: true,
  },
  StructureError: {
    create: (module, cause) =>
      new module.StructureError({
        code: module.ErrorCode.UNANSWERED_TOOL_CALL,
        sessionId: 's1',
        type: 'step/end',
        seq: 12,
        detail: 'tool call "call_1" has no result',
        callIds: ['call_1'],
        expected: { turn: 1, step: 2 },
        actual: { turn: 1, step: 2 },
        ...withCause(cause),
      }),
    code: ErrorCode.UNANSWERED_TOOL_CALL,
    fields: { type: 'step/end', callIds: ['call_1'], expected: { turn: 1, step: 2 }, actual: { turn: 1, step: 2 } },
    mentions: ['step/end at seq 12', '"call_1"'],
    parents: ['SessionError'],
    sibling: 'SurfaceError',
    takesCause: true,
  },
  SessionStateError: {
    create: (module, cause) =>
      new module.SessionStateError({
        code: module.ErrorCode.REENTRANT_APPEND,
        sessionId: 's3',
        detail: 'append from inside a guard of the same session',
        ...withCause(cause),
      }),
    code: ErrorCode.REENTRANT_APPEND,
    fields: { sessionId: 's3' },
    mentions: ['session "s3": append from inside a guard'],
    parents: ['SessionError'],
    sibling: 'SessionVetoError',
    takesCause: true,
  },
  SessionVetoError: {
    create: (module, cause) =>
      new module.SessionVetoError({
        code: module.ErrorCode.APPEND_VETOED,
        sessionId: 's1',
        detail: 'guard "policy" vetoed the append',
        guard: 'policy',
        ...withCause(cause),
      }),
    code: ErrorCode.APPEND_VETOED,
    fields: { sessionId: 's1', guard: 'policy' },
    mentions: ['"policy"'],
    parents: ['SessionError'],
    sibling: 'SessionStateError',
    takesCause: true,
  },
  SessionHeaderError: {
    create: (module, cause) =>
      new module.SessionHeaderError({
        code: module.ErrorCode.INVALID_HEADER,
        detail: 'header "title" must be a string (got 5)',
        field: 'title',
        ...withCause(cause),
      }),
    code: ErrorCode.INVALID_HEADER,
    fields: { field: 'title', sessionId: undefined },
    mentions: ['header "title" must be a string (got 5)'],
    parents: ['SessionError'],
    sibling: 'SessionRegistryError',
    takesCause: true,
  },
  SessionRegistryError: {
    create: (module, cause) =>
      new module.SessionRegistryError({
        code: module.ErrorCode.FLUSH_FAILED,
        sessionId: 's4',
        detail: '1 session/flush listener failed',
        errors: [closeFailure],
        ...withCause(cause),
      }),
    code: ErrorCode.FLUSH_FAILED,
    fields: { sessionId: 's4', errors: [closeFailure] },
    mentions: ['session "s4"', 'session/flush'],
    parents: ['SessionError'],
    sibling: 'SessionForkError',
    takesCause: true,
  },
  SessionForkError: {
    create: (module, cause) =>
      new module.SessionForkError({
        code: module.ErrorCode.INVALID_BOUNDARY,
        sessionId: 's1',
        detail: 'boundary 10 is not a seq of the source (last seq 4)',
        at: 10,
        lastSeq: 4,
        ...withCause(cause),
      }),
    code: ErrorCode.INVALID_BOUNDARY,
    fields: { sessionId: 's1', at: 10, lastSeq: 4 },
    mentions: ['session "s1"', 'boundary 10', 'last seq 4'],
    parents: ['SessionError'],
    sibling: 'SessionRegistryError',
    takesCause: true,
  },
  EventTypeError: {
    create: (module, cause) =>
      new module.EventTypeError({
        code: module.ErrorCode.DUPLICATE_EVENT_TYPE,
        detail: 'event type "acme/note" is already registered',
        eventType: 'acme/note',
        ...withCause(cause),
      }),
    code: ErrorCode.DUPLICATE_EVENT_TYPE,
    fields: { eventType: 'acme/note' },
    mentions: ['"acme/note"'],
    parents: ['SessionError'],
    sibling: 'UnknownEventError',
    takesCause: true,
  },
  PersistenceError: {
    create: (module, cause) =>
      new module.PersistenceError({
        code: module.ErrorCode.WRITE_FAILED,
        sessionId: 's1',
        detail: 'the storage write failed',
        reason: 'disk full',
        ...withCause(cause),
      }),
    code: ErrorCode.WRITE_FAILED,
    fields: { sessionId: 's1', reason: 'disk full' },
    mentions: ['session "s1"', 'storage write failed'],
    parents: [],
    sibling: 'PersistenceCorruptionError',
    takesCause: true,
  },
  PersistenceCorruptionError: {
    create: (module, cause) =>
      new module.PersistenceCorruptionError({
        code: module.ErrorCode.CORRUPT_LOG,
        sessionId: 's1',
        detail: 'session log /d/s1.jsonl is damaged at byte 812 (line 8)',
        location: '/d/s1.jsonl',
        offset: 812,
        line: 8,
        defect: 'unparsable',
        ...withCause(cause),
      }),
    code: ErrorCode.CORRUPT_LOG,
    fields: { sessionId: 's1', location: '/d/s1.jsonl', offset: 812, line: 8, defect: 'unparsable' },
    mentions: ['session "s1"', 'byte 812', 'line 8'],
    parents: [],
    sibling: 'PersistenceError',
    takesCause: true,
  },
  SessionFormatUnsupportedError: {
    create: (module, cause) =>
      new module.SessionFormatUnsupportedError({
        code: module.ErrorCode.FORMAT_TOO_NEW,
        sessionId: 's1',
        detail: 'stored in log format v2, newer than the v1 this Yoke reads',
        storedVersion: 2,
        supportedVersion: 1,
        direction: 'newer',
        ...withCause(cause),
      }),
    code: ErrorCode.FORMAT_TOO_NEW,
    fields: { sessionId: 's1', storedVersion: 2, supportedVersion: 1, direction: 'newer' },
    mentions: ['session "s1"', 'v2'],
    parents: [],
    sibling: 'PersistenceCorruptionError',
    takesCause: true,
  },
  SessionLockedError: {
    create: (module, cause) =>
      new module.SessionLockedError({
        code: module.ErrorCode.SESSION_LOCKED,
        sessionId: 's1',
        detail: 'locked by pid 42 on host a',
        holder: { pid: 42, host: 'a', acquiredAt: 1 },
        location: '/d/s1.lock',
        ...withCause(cause),
      }),
    code: ErrorCode.SESSION_LOCKED,
    fields: { sessionId: 's1', holder: { pid: 42, host: 'a', acquiredAt: 1 }, location: '/d/s1.lock' },
    mentions: ['session "s1"', 'pid 42'],
    parents: [],
    sibling: 'LeaseLostError',
    takesCause: true,
  },
  SessionBusyError: {
    create: (module) => new module.SessionBusyError({ sessionId: 'support-42' }),
    code: ErrorCode.SESSION_BUSY,
    fields: { sessionId: 'support-42' },
    mentions: ['"support-42"', 'nothing was submitted'],
    parents: [],
    sibling: 'SessionLockedError',
    takesCause: false,
  },
  MessageTooLargeError: {
    create: (module) =>
      new module.MessageTooLargeError({ sessionId: 'support-42', bytes: 2_000_000, limit: 1_048_576 }),
    code: ErrorCode.MESSAGE_TOO_LARGE,
    fields: { sessionId: 'support-42', bytes: 2_000_000, limit: 1_048_576 },
    mentions: ['"support-42"', '2000000', '1048576'],
    parents: [],
    sibling: 'InvalidMessageError',
    takesCause: false,
  },
  LeaseLostError: {
    create: (module, cause) =>
      new module.LeaseLostError({
        code: module.ErrorCode.LEASE_LOST,
        sessionId: 's1',
        detail: 'the lock file no longer holds our token',
        epoch: 1,
        ...withCause(cause),
      }),
    code: ErrorCode.LEASE_LOST,
    fields: { sessionId: 's1', epoch: 1 },
    mentions: ['session "s1"', 'token'],
    parents: [],
    sibling: 'SessionLockedError',
    takesCause: true,
  },
  SeqConflictError: {
    create: (module, cause) =>
      new module.SeqConflictError({
        code: module.ErrorCode.SEQ_CONFLICT,
        sessionId: 's1',
        detail: 'expected seq 5, storage is at 6',
        expectedSeq: 5,
        storedSeq: 6,
        ...withCause(cause),
      }),
    code: ErrorCode.SEQ_CONFLICT,
    fields: { sessionId: 's1', expectedSeq: 5, storedSeq: 6 },
    mentions: ['session "s1"', 'seq 5'],
    parents: [],
    sibling: 'PersistenceError',
    takesCause: true,
  },
  PersistenceBackpressureError: {
    create: (module, cause) =>
      new module.PersistenceBackpressureError({
        code: module.ErrorCode.PERSISTENCE_BACKPRESSURE,
        sessionId: 's1',
        detail: '3 events are waiting to be written',
        pendingEvents: 3,
        pendingBytes: 120,
        ...withCause(cause),
      }),
    code: ErrorCode.PERSISTENCE_BACKPRESSURE,
    fields: { sessionId: 's1', pendingEvents: 3, pendingBytes: 120 },
    mentions: ['session "s1"', '3 events'],
    parents: [],
    sibling: 'PersistenceError',
    takesCause: true,
  },
  LlmError: {
    create: (module, cause) =>
      new module.LlmError(
        {
          code: 'RATE_LIMIT',
          message: 'model request failed with HTTP 429 (RATE_LIMIT): slow down',
          retryable: true,
          status: 429,
          phase: 'response',
        },
        { attempts: 3, ...withCause(cause) },
      ),
    code: ErrorCode.RATE_LIMIT,
    fields: {
      failure: {
        code: 'RATE_LIMIT',
        message: 'model request failed with HTTP 429 (RATE_LIMIT): slow down',
        retryable: true,
        status: 429,
        phase: 'response',
      },
      attempts: 3,
    },
    mentions: ['HTTP 429', 'slow down'],
    parents: [],
    sibling: 'ModelRegistryError',
    takesCause: true,
  },
  ModelRegistryError: {
    create: (module, cause) =>
      new module.ModelRegistryError({
        code: module.ErrorCode.DUPLICATE_PROVIDER,
        message: 'provider "a" is already routed in this layer',
        provider: 'a',
        value: 'a',
        ...withCause(cause),
      }),
    code: ErrorCode.DUPLICATE_PROVIDER,
    fields: { provider: 'a', value: 'a' },
    mentions: ['"a"'],
    parents: [],
    sibling: 'LlmError',
    takesCause: true,
  },
  ScriptedModelError: {
    create: (module) => new module.ScriptedModelError({ code: module.ErrorCode.SCRIPT_INCOMPLETE, remaining: 2 }),
    code: ErrorCode.SCRIPT_INCOMPLETE,
    fields: { remaining: 2, overrun: undefined },
    mentions: ['2 scripted replies'],
    parents: [],
    sibling: 'LlmError',
    takesCause: false,
  },
  ToolDefinitionError: {
    create: (module, cause) =>
      new module.ToolDefinitionError({
        toolName: 'read',
        field: 'timeoutMs',
        value: 0,
        reason: 'must be a positive finite number of milliseconds (got 0)',
        ...withCause(cause),
      }),
    code: ErrorCode.INVALID_TOOL_DEFINITION,
    fields: { toolName: 'read', field: 'timeoutMs', value: 0 },
    mentions: ['tool "read": timeoutMs must be a positive finite number', '(got 0)'],
    parents: [],
    sibling: 'ToolConflictError',
    takesCause: true,
  },
  ToolConflictError: {
    create: (module) => new module.ToolConflictError({ toolName: 'read', scope: undefined }),
    code: ErrorCode.TOOL_CONFLICT,
    fields: { toolName: 'read', scope: undefined },
    mentions: ['tool "read" is already registered in the global layer', 'agent.ctx.tools'],
    parents: [],
    sibling: 'ToolDefinitionError',
    takesCause: false,
  },
  ToolRestrictionError: {
    create: (module) =>
      new module.ToolRestrictionError({ problem: 'unknown-name', names: ['nope'], known: ['bash', 'read'] }),
    code: ErrorCode.INVALID_RESTRICTION,
    fields: { problem: 'unknown-name', names: ['nope'], known: ['bash', 'read'] },
    mentions: ['"nope"', 'inherited: bash, read'],
    parents: [],
    sibling: 'ToolConflictError',
    takesCause: false,
  },
  ApprovalNotPendingError: {
    create: (module) => new module.ApprovalNotPendingError({ approvalId: 'approval-9' }),
    code: ErrorCode.APPROVAL_NOT_PENDING,
    fields: { approvalId: 'approval-9' },
    mentions: ['approval "approval-9" is not pending'],
    parents: [],
    sibling: 'ToolDeniedError',
    takesCause: false,
  },
  ToolCallError: {
    create: (module, cause) =>
      new module.ToolCallError(module.ErrorCode.TOOL_FAILED, {
        toolName: 'read',
        callId: 'call-1',
        message: '"read" failed: disk gone',
        ...withCause(cause),
      }),
    code: ErrorCode.TOOL_FAILED,
    fields: { toolName: 'read', callId: 'call-1' },
    mentions: ['"read" failed: disk gone'],
    parents: [],
    sibling: 'ToolDefinitionError',
    takesCause: true,
  },
  UnknownToolError: {
    create: (module, cause) =>
      new module.UnknownToolError({
        toolName: 'nope',
        callId: 'call-2',
        message: 'no tool named "nope" is available',
        ...withCause(cause),
      }),
    code: ErrorCode.UNKNOWN_TOOL,
    fields: { toolName: 'nope', callId: 'call-2' },
    mentions: ['no tool named "nope" is available'],
    parents: ['ToolCallError'],
    sibling: 'ToolArgumentsError',
    takesCause: true,
  },
  ToolArgumentsError: {
    create: (module, cause) =>
      new module.ToolArgumentsError({
        toolName: 'read',
        callId: 'call-3',
        message: 'arguments for "read" do not match its input schema: path: Invalid input',
        ...withCause(cause),
      }),
    code: ErrorCode.INVALID_ARGUMENTS,
    fields: { toolName: 'read', callId: 'call-3' },
    mentions: ['arguments for "read" do not match its input schema: path:'],
    parents: ['ToolCallError'],
    sibling: 'UnknownToolError',
    takesCause: true,
  },
  ToolDeniedError: {
    create: (module, cause) =>
      new module.ToolDeniedError({
        toolName: 'bash',
        callId: 'call-4',
        message: '"bash" was denied by policy',
        ...withCause(cause),
      }),
    code: ErrorCode.TOOL_DENIED,
    fields: { toolName: 'bash', callId: 'call-4' },
    mentions: ['"bash" was denied by policy'],
    parents: ['ToolCallError'],
    sibling: 'ToolFailedError',
    takesCause: true,
  },
  ToolFailedError: {
    create: (module, cause) =>
      new module.ToolFailedError({ toolName: 'read', callId: 'call-5', message: 'exploded', ...withCause(cause) }),
    code: ErrorCode.TOOL_FAILED,
    fields: { toolName: 'read', callId: 'call-5' },
    mentions: ['exploded'],
    parents: ['ToolCallError'],
    sibling: 'ToolDeniedError',
    takesCause: true,
  },
  ToolTimeoutError: {
    create: (module, cause) =>
      new module.ToolTimeoutError({
        toolName: 't',
        callId: 'call-6',
        message: '"t" did not finish within 50 ms',
        ...withCause(cause),
      }),
    code: ErrorCode.TOOL_TIMEOUT,
    fields: { toolName: 't', callId: 'call-6' },
    mentions: ['"t" did not finish within 50 ms'],
    parents: ['ToolCallError'],
    sibling: 'ToolAbortedError',
    takesCause: true,
  },
  ToolAbortedError: {
    create: (module, cause) =>
      new module.ToolAbortedError({
        code: module.ErrorCode.TOOL_ABORTED_BEFORE_DISPATCH,
        toolName: 't',
        callId: 'call-7',
        message: 'the call to "t" was cancelled before it started',
        ...withCause(cause),
      }),
    code: ErrorCode.TOOL_ABORTED_BEFORE_DISPATCH,
    fields: { toolName: 't', callId: 'call-7' },
    mentions: ['the call to "t" was cancelled before it started'],
    parents: ['ToolCallError'],
    sibling: 'ToolTimeoutError',
    takesCause: true,
  },
  ToolSchedulerError: {
    create: (module, cause) =>
      new module.ToolSchedulerError({
        toolName: 't',
        callId: 'call-8',
        message: 'the call to "t" was not completed because the tool scheduler failed',
        ...withCause(cause),
      }),
    code: ErrorCode.TOOL_SCHEDULER_FAILED,
    fields: { toolName: 't', callId: 'call-8' },
    mentions: ['the tool scheduler failed'],
    parents: ['ToolCallError'],
    sibling: 'ToolAbortedError',
    takesCause: true,
  },
  PromptRegistrationError: {
    create: (module) =>
      new module.PromptRegistrationError({
        code: module.ErrorCode.INVALID_PROMPT_CONTRIBUTION,
        kind: 'section',
        field: 'order',
        value: Number.NaN,
        reason: 'must be a finite number (got NaN)',
      }),
    code: ErrorCode.INVALID_PROMPT_CONTRIBUTION,
    fields: { kind: 'section', field: 'order', value: Number.NaN },
    mentions: ['section', 'order', 'NaN'],
    parents: [],
    sibling: 'PromptAssemblyError',
    takesCause: false,
  },
  PromptAssemblyError: {
    create: (module, cause) =>
      new module.PromptAssemblyError({
        code: module.ErrorCode.MULTIPLE_COMPLETE_SECTIONS,
        message: 'more than one complete section: "c2", "exact"',
        names: ['c2', 'exact'],
        ...withCause(cause),
      }),
    code: ErrorCode.MULTIPLE_COMPLETE_SECTIONS,
    fields: { names: ['c2', 'exact'], kind: undefined, known: undefined, path: undefined, valueType: undefined },
    mentions: ['"c2"', '"exact"'],
    parents: [],
    sibling: 'PromptRenderError',
    takesCause: true,
  },
  PromptRenderError: {
    create: (module) =>
      new module.PromptRenderError({
        code: module.ErrorCode.PROMPT_VARIABLE_UNKNOWN,
        reference: '{{x}}',
        variable: 'x',
        section: 's',
        sectionKind: 'section',
        registered: ['a', 'b'],
      }),
    code: ErrorCode.PROMPT_VARIABLE_UNKNOWN,
    fields: { reference: '{{x}}', variable: 'x', section: 's', sectionKind: 'section', registered: ['a', 'b'] },
    mentions: ['unknown variable "{{x}}" in section "s" (registered: a, b)'],
    parents: [],
    sibling: 'PromptAssemblyError',
    takesCause: false,
  },
  UnknownPresetError: {
    create: (module) => new module.UnknownPresetError({ preset: 'nope', known: ['reviewer'] }),
    code: ErrorCode.UNKNOWN_PRESET,
    fields: { preset: 'nope', known: ['reviewer'] },
    mentions: ['"nope"', 'reviewer'],
    parents: [],
    sibling: 'PresetMismatchError',
    takesCause: false,
  },
  PresetMismatchError: {
    create: (module) => new module.PresetMismatchError({ recorded: 'reviewer', requested: 'other' }),
    code: ErrorCode.PRESET_MISMATCH,
    fields: { recorded: 'reviewer', requested: 'other' },
    mentions: ['"reviewer"', '"other"'],
    parents: [],
    sibling: 'UnknownPresetError',
    takesCause: false,
  },
  PresetSetupError: {
    create: (module, cause) =>
      new module.PresetSetupError({ preset: 'q', cause: cause ?? new Error('setup exploded') }),
    code: ErrorCode.PRESET_SETUP_FAILED,
    fields: { preset: 'q' },
    mentions: ['"q"'],
    parents: [],
    sibling: 'UnknownPresetError',
    takesCause: true,
  },
  InitiatorError: {
    create: (module) => new module.InitiatorError({ code: module.ErrorCode.NO_INITIATOR }),
    code: ErrorCode.NO_INITIATOR,
    fields: {},
    mentions: ['initiator.require()'],
    parents: [],
    sibling: 'PresetSetupError',
    takesCause: false,
  },
  InvalidMessageError: {
    create: (module, cause) =>
      new module.InvalidMessageError({
        field: 'content[0].text',
        value: 7,
        reason: 'must be a string',
        ...withCause(cause),
      }),
    code: ErrorCode.INVALID_MESSAGE,
    fields: { field: 'content[0].text', value: 7, reason: 'must be a string' },
    mentions: ['invalid message: content[0].text must be a string'],
    parents: [],
    sibling: 'DuplicateMessageError',
    takesCause: true,
  },
  DuplicateMessageError: {
    create: (module) => new module.DuplicateMessageError({ messageId: 'm-42' }),
    code: ErrorCode.DUPLICATE_MESSAGE_ID,
    fields: { messageId: 'm-42' },
    mentions: ['"m-42"'],
    parents: [],
    sibling: 'InvalidMessageError',
    takesCause: false,
  },
  AgentDisposedError: {
    create: (module) => new module.AgentDisposedError({ agentId: 'agent-3', operation: 'send' }),
    code: ErrorCode.AGENT_DISPOSED,
    fields: { agentId: 'agent-3', operation: 'send' },
    mentions: ['"agent-3"', 'cannot send'],
    parents: [],
    sibling: 'AgentBusyError',
    takesCause: false,
  },
  AgentBusyError: {
    create: (module) => new module.AgentBusyError({ agentId: 'agent-3', phase: 'maintenance', operation: 'compact' }),
    code: ErrorCode.AGENT_BUSY,
    fields: { agentId: 'agent-3', phase: 'maintenance' },
    mentions: ['"agent-3"', 'maintenance', 'compact'],
    parents: [],
    sibling: 'AgentDisposedError',
    takesCause: false,
  },
  MissingModelError: {
    create: (module) => new module.MissingModelError({ missing: ['provider', 'model'] }),
    code: ErrorCode.MISSING_MODEL,
    fields: { missing: ['provider', 'model'] },
    mentions: ['provider or model', 'agent/request'],
    parents: [],
    sibling: 'ReconstructionError',
    takesCause: false,
  },
  ReconstructionError: {
    create: (module) =>
      new module.ReconstructionError({
        path: '$.messages[1].content[0].text',
        expected: 'hi',
        actual: 'ho',
        reason: 'the strings differ',
      }),
    code: ErrorCode.RECONSTRUCTION_MISMATCH,
    fields: { path: '$.messages[1].content[0].text', expected: 'hi', actual: 'ho' },
    mentions: ['$.messages[1].content[0].text', 'the strings differ'],
    parents: [],
    sibling: 'RequestNotFoundError',
    takesCause: false,
  },
  OutputValidationError: {
    create: (module, cause) =>
      new module.OutputValidationError({
        issues: [
          { path: 'items[0].name', message: 'expected string, received number' },
          { path: 'count', message: 'expected number, received undefined' },
        ],
        text: '{"items":[{"name":1}]}',
        ...(cause === undefined ? {} : { cause }),
      }),
    code: ErrorCode.OUTPUT_INVALID,
    fields: { path: 'items[0].name', text: '{"items":[{"name":1}]}', result: undefined },
    mentions: ['items[0].name', 'expected string, received number'],
    parents: [],
    sibling: 'RunDiscardedError',
    takesCause: true,
  },
  RequestNotFoundError: {
    create: (module) => new module.RequestNotFoundError({ turn: 1, step: 2, attempt: 4 }),
    code: ErrorCode.REQUEST_NOT_FOUND,
    fields: { turn: 1, step: 2, attempt: 4 },
    mentions: ['attempt 4', 'turn 1', 'step 2'],
    parents: [],
    sibling: 'ReconstructionError',
    takesCause: false,
  },
  AgentExistsError: {
    create: (module) => new module.AgentExistsError({ agentId: 'agent-9' }),
    code: ErrorCode.AGENT_EXISTS,
    fields: { agentId: 'agent-9' },
    mentions: ['"agent-9"'],
    parents: [],
    sibling: 'AgentDisposedError',
    takesCause: false,
  },
  AgentOverridesMismatchError: {
    create: (module) =>
      new module.AgentOverridesMismatchError({ agentId: 'agent-4', fields: ['options.maxTokens', 'tools'] }),
    code: ErrorCode.AGENT_OVERRIDES_MISMATCH,
    fields: { agentId: 'agent-4', fields: ['options.maxTokens', 'tools'] },
    mentions: ['"agent-4"', 'options.maxTokens', 'tools'],
    parents: [],
    sibling: 'AgentExistsError',
    takesCause: false,
  },
  AgentCreationAbortedError: {
    create: (module, cause) => new module.AgentCreationAbortedError({ reason: cause ?? creationAbortReason }),
    code: ErrorCode.AGENT_CREATION_ABORTED,
    fields: { reason: creationAbortReason },
    mentions: ['aborted'],
    parents: [],
    sibling: 'AgentExistsError',
    takesCause: true,
  },
  RunDiscardedError: {
    create: (module, cause) =>
      new module.RunDiscardedError({ reason: 'canceled', messageId: 'm-5', ...withCause(cause) }),
    code: ErrorCode.RUN_DISCARDED,
    fields: { reason: 'canceled', messageId: 'm-5' },
    mentions: ['"m-5"', 'canceled'],
    parents: [],
    sibling: 'StreamOverflowError',
    takesCause: true,
  },
  StreamOverflowError: {
    create: (module) => new module.StreamOverflowError({ limit: 4, lastYieldedSeq: 17 }),
    code: ErrorCode.STREAM_OVERFLOW,
    fields: { limit: 4, lastYieldedSeq: 17 },
    mentions: ['4 events', 'seq 17'],
    parents: [],
    sibling: 'RunDiscardedError',
    takesCause: false,
  },
  LastEventIdError: {
    create: (module) =>
      new module.LastEventIdError({ value: '12x', problem: 'not-a-seq', sessionId: 'tenant:ada', lastSeq: 41 }),
    code: ErrorCode.INVALID_LAST_EVENT_ID,
    fields: { value: '12x', problem: 'not-a-seq', sessionId: 'tenant:ada', lastSeq: 41 },
    mentions: ['"12x"', '"tenant:ada"'],
    parents: [],
    sibling: 'StreamOverflowError',
    takesCause: false,
  },
  CompactionError: {
    create: (module, cause) =>
      new module.CompactionError(module.ErrorCode.SUMMARY_NOT_SMALLER, {
        sessionId: 's-7',
        compactionId: 'c3',
        detail: 'the checkpoint (900 tokens) is not smaller than the span it replaces (416 tokens)',
        shadowedTokens: 416,
        summaryTokens: 900,
        ...withCause(cause),
      }),
    code: ErrorCode.SUMMARY_NOT_SMALLER,
    fields: {
      sessionId: 's-7',
      compactionId: 'c3',
      shadowedTokens: 416,
      summaryTokens: 900,
      reason: undefined,
      start: undefined,
      end: undefined,
    },
    mentions: ['"c3"', '"s-7"', 'SUMMARY_NOT_SMALLER', '416 tokens'],
    parents: [],
    sibling: 'LlmError',
    takesCause: true,
  },
}

function withCause(cause: unknown): { cause?: unknown } {
  return cause === undefined ? {} : { cause }
}

function optionsWithCause(cause: unknown): ErrorOptions | undefined {
  return cause === undefined ? undefined : { cause }
}

function classOf(module: ErrorsModule, name: ClassName): ErrorClass {
  return module[name]
}

const classNames = Object.keys(cases) as ClassName[]

describe('error classes', () => {
  test('the table covers every error class the module exports', () => {
    const exported = Object.entries(errors)
      .filter(([, value]) => typeof value === 'function' && 'brand' in value)
      .map(([name]) => name)
      .sort()
    expect(exported).toEqual([...classNames].sort())
  })

  test('the root barrel re-exports the same classes', async () => {
    const root = await import('yoke')
    for (const name of classNames) expect(root[name], name).toBe(classOf(errors, name))
    expect(root.ErrorCode).toBe(errors.ErrorCode)
  })

  describe.each(classNames)('%s', (name) => {
    const spec = cases[name]
    const errorClass = classOf(errors, name)

    test('has its code, name and structured fields', () => {
      const error = spec.create(errors)
      expect(error.code).toBe(spec.code)
      expect(error.name).toBe(name)
      expect(errorClass.brand).toBe(name)
      expect(error).toMatchObject(spec.fields)
      expect(error).toBeInstanceOf(Error)
      expect(error).toBeInstanceOf(errorClass)
      expect(error).toBeInstanceOf(HarnessError)
      expect(typeof error.stack).toBe('string')
    })

    test('its message names the offending values', () => {
      const error = spec.create(errors)
      for (const mention of spec.mentions) expect(error.message).toContain(mention)
      expect(String(error)).toBe(`${name}: ${error.message}`)
    })

    test('the cause passes through', () => {
      const cause = new Error('underlying')
      const error = spec.create(errors, cause)
      if (spec.takesCause) {
        expect(error.cause).toBe(cause)
      } else {
        expect(Object.hasOwn(error, 'cause')).toBe(false)
      }
    })

    test('is() recognises it, its ancestors recognise it, a sibling does not', () => {
      const error = spec.create(errors)
      expect(HarnessError.is(error)).toBe(true)
      expect(errorClass.is(error)).toBe(true)
      for (const parent of spec.parents) {
        expect(classOf(errors, parent).is(error), parent).toBe(true)
        expect(error).toBeInstanceOf(classOf(errors, parent))
      }
      expect(classOf(errors, spec.sibling).is(error)).toBe(false)
      const unrelated = classNames.filter(
        (other) => other !== name && other !== 'HarnessError' && !spec.parents.includes(other),
      )
      for (const other of unrelated) expect(classOf(errors, other).is(error), other).toBe(false)
    })
  })

  test('is() rejects values that are not Yoke errors', () => {
    const plain = Object.assign(new Error('service "x" is not provided'), {
      name: 'ServiceMissingError',
      code: ErrorCode.SERVICE_MISSING,
    })
    for (const value of [plain, undefined, null, 'ServiceMissingError', 42, {}, { code: 'SERVICE_MISSING' }]) {
      expect(HarnessError.is(value)).toBe(false)
      expect(errors.ServiceMissingError.is(value)).toBe(false)
    }
  })

  test('a subclass instance is not recognised by a subclass of its own parent', () => {
    const config = new errors.ConfigError({ option: 'dir', reason: 'is a file' })
    expect(errors.ConfigError.is(config)).toBe(true)
    expect(errors.InvalidOptionsError.is(config)).toBe(false)
  })
})

describe('message and field variants', () => {
  test('a structured field array is a frozen copy of the input', () => {
    const cycle = ['a', 'b', 'a']
    const error = new errors.PluginCycleError({ cycle })
    cycle.push('c')
    expect(error.cycle).toEqual(['a', 'b', 'a'])
    expect(Object.isFrozen(error.cycle)).toBe(true)
  })

  test('ConfigError takes ZSTD_UNAVAILABLE and a custom message', () => {
    const error = new errors.ConfigError({
      option: 'compression',
      value: 'zstd',
      reason: 'zstd is not available in this runtime',
      code: ErrorCode.ZSTD_UNAVAILABLE,
      message: 'compression "zstd" needs node:zlib zstd support',
    })
    expect(error.code).toBe(ErrorCode.ZSTD_UNAVAILABLE)
    expect(error.message).toBe('compression "zstd" needs node:zlib zstd support')
    expect(error.reason).toBe('zstd is not available in this runtime')
  })

  test('InvalidOptionsError with a root issue and a custom subject', () => {
    const error = new errors.InvalidOptionsError({
      issues: [{ path: [], message: 'must be an options object' }],
      value: 42,
      subject: 'agent options',
    })
    expect(error.field).toBe('')
    expect(error.message).toBe('agent options: must be an options object')
  })

  test('WaterfallNextError after-settle', () => {
    const error = new errors.WaterfallNextError({ event: 'acme/render', reason: 'after-settle' })
    expect(error.message).toBe('next() of a "acme/render" listener was called after its listener settled')
  })

  test('ScopeLinkError describes a key without an id by its class', () => {
    class AgentHandle {}
    const error = new errors.ScopeLinkError({ reason: 'already-bound', key: new AgentHandle() })
    expect(error.message).toBe('cannot link scope (a AgentHandle): the key already has a parent')
  })

  test('InvalidPluginError without a known name', () => {
    const error = new errors.InvalidPluginError({ plugin: '', field: 'name', reason: 'must be a non-empty string' })
    expect(error.message).toBe('a plugin has an invalid name: must be a non-empty string')
  })

  test('PluginStartError names a non-Error cause', () => {
    const error = new errors.PluginStartError({
      plugin: 'ledger',
      pluginName: 'ledger',
      cause: 'timeout after 5s',
      rollbackErrors: [],
      inspection: undefined,
    })
    expect(error.message).toBe('plugin "ledger" failed to start: timeout after 5s')
    expect(error.cause).toBe('timeout after 5s')
  })

  test('UnknownEntryError with no known ids', () => {
    const error = new errors.UnknownEntryError({ id: 'x', patch: 'patches[0]', knownIds: [] })
    expect(error.message).toContain('(known: none)')
  })
})

describe('ErrorCode', () => {
  test('values are unique strings equal to their keys', () => {
    const entries = Object.entries(ErrorCode)
    expect(entries.length).toBeGreaterThan(0)
    for (const [key, value] of entries) {
      expect(typeof value).toBe('string')
      expect(value).toBe(key)
    }
    expect(new Set(Object.values(ErrorCode)).size).toBe(entries.length)
  })

  test('every code of the table is an ErrorCode value', () => {
    const values = new Set<string>(Object.values(ErrorCode))
    for (const name of classNames) expect(values.has(cases[name].code), name).toBe(true)
  })
})

describe('a second loaded copy of the module', () => {
  async function loadSecondCopy(): Promise<ErrorsModule> {
    vi.resetModules()
    const copy = await import('../../src/errors/index.js')
    // Guard the premise: this really is another copy, so instanceof cannot bridge it.
    expect(copy.HarnessError).not.toBe(errors.HarnessError)
    return copy
  }

  test.each(classNames)('%s made by copy 2 passes copy 1 is() but not instanceof', async (name) => {
    const copy = await loadSecondCopy()
    const spec = cases[name]
    const error = spec.create(copy)
    expect(error).not.toBeInstanceOf(classOf(errors, name))
    expect(error).not.toBeInstanceOf(errors.HarnessError)
    expect(error).toBeInstanceOf(Error)
    expect(errors.HarnessError.is(error)).toBe(true)
    expect(classOf(errors, name).is(error)).toBe(true)
    for (const parent of spec.parents) expect(classOf(errors, parent).is(error)).toBe(true)
    expect(classOf(errors, spec.sibling).is(error)).toBe(false)
    // and the other way round
    const original = spec.create(errors)
    expect(classOf(copy, name).is(original)).toBe(true)
    expect(classOf(copy, spec.sibling).is(original)).toBe(false)
  })

  test('the copy loaded through the package entry agrees too', async () => {
    vi.resetModules()
    const root = await import('yoke')
    expect(root.ServiceMissingError).not.toBe(errors.ServiceMissingError)
    const error = new root.ServiceMissingError({ key: 'acme/ledger', requestedBy: 'harness', owner: 'harness' })
    expect(errors.ServiceMissingError.is(error)).toBe(true)
    expect(errors.ServiceConflictError.is(error)).toBe(false)
    expect(error.code).toBe(errors.ErrorCode.SERVICE_MISSING)
  })
})

describe('tool error variants', () => {
  test('ToolConflictError: a batch clash and a scoped clash carry no agent.ctx.tools hint', () => {
    const batch = new errors.ToolConflictError({ toolName: 'read', scope: undefined, inBatch: true })
    expect(batch.message).toBe('tool "read" appears twice in one registration batch')
    const scope = { id: 'agent-1' }
    const scoped = new errors.ToolConflictError({ toolName: 'read', scope })
    expect(scoped.message).toBe('tool "read" is already registered in this scope')
    expect(scoped.scope).toBe(scope)
  })

  test('ToolRestrictionError: unscoped, empty, and unknown names with nothing inherited', () => {
    const unscoped = new errors.ToolRestrictionError({ problem: 'unscoped' })
    expect(unscoped).toMatchObject({ problem: 'unscoped', names: undefined, known: undefined })
    expect(unscoped.message).toBe('a restriction needs a scope: the global layer cannot be restricted')
    expect(new errors.ToolRestrictionError({ problem: 'empty' }).message).toBe(
      'a restriction needs a non-empty allow or deny list',
    )
    const none = new errors.ToolRestrictionError({ problem: 'unknown-name', names: ['a', 'b'], known: [] })
    expect(none.message).toBe('cannot restrict "a", "b": the scope does not inherit those tools (inherited: (none))')
    expect(Object.isFrozen(none.names)).toBe(true)
  })

  test('ToolDefinitionError without a readable name', () => {
    const error = new errors.ToolDefinitionError({
      field: 'name',
      value: 'read file',
      reason: 'must match [A-Za-z0-9_-]',
    })
    expect(error.message).toBe('tool definition: name must match [A-Za-z0-9_-]')
    expect(error.toolName).toBeUndefined()
  })

  test('ToolAbortedError carries either abort code; a call id is optional', () => {
    const error = new errors.ToolAbortedError({
      code: ErrorCode.TOOL_ABORTED,
      toolName: 't',
      message: 'the call to "t" was cancelled while it was running',
    })
    expect(error.code).toBe(ErrorCode.TOOL_ABORTED)
    expect(error.callId).toBeUndefined()
    expect(errors.ToolCallError.is(error)).toBe(true)
  })
})

describe('prompt errors whose spec field list includes `name`', () => {
  test('a duplicate contribution carries the taken name in `name`, and is() still recognises the class', () => {
    const error = new errors.PromptRegistrationError({
      code: ErrorCode.DUPLICATE_PROMPT_CONTRIBUTION,
      kind: 'section',
      name: 'rules',
    })
    expect(error).toMatchObject({ code: 'DUPLICATE_PROMPT_CONTRIBUTION', kind: 'section', name: 'rules' })
    expect(Object.hasOwn(error as object, 'scope')).toBe(false)
    expect(errors.PromptRegistrationError.is(error)).toBe(true)
    expect(error.message).toContain('register through an agent or preset context')
  })

  test('an assembly error with a name carries it in `name`', () => {
    const error = new errors.PromptAssemblyError({
      code: ErrorCode.UNKNOWN_TOOL_ORDER_ENTRY,
      message: 'toolOrder names "ghost"',
      name: 'ghost',
      known: ['alpha'],
    })
    expect(error).toMatchObject({ name: 'ghost', known: ['alpha'] })
    expect(errors.PromptAssemblyError.is(error)).toBe(true)
  })
})

describe('agent error variants', () => {
  test('InvalidMessageError about the input itself has no field prefix', () => {
    const error = new errors.InvalidMessageError({
      field: '',
      value: 42,
      reason: 'must be a string or a { content, source? } object',
    })
    expect(error.message).toBe('invalid message: must be a string or a { content, source? } object')
    expect(error).toMatchObject({ field: '', value: 42 })
  })

  test('MissingModelError keeps a frozen copy of the missing fields and names only those', () => {
    const missing: ('provider' | 'model')[] = ['model']
    const error = new errors.MissingModelError({ missing })
    missing.push('provider')
    expect(error.missing).toEqual(['model'])
    expect(Object.isFrozen(error.missing)).toBe(true)
    expect(error.message).toMatch(/^no model for the model request/)
  })

  test('ReconstructionError without a reason ends at the path', () => {
    const error = new errors.ReconstructionError({ path: '$' })
    expect(error.message).toBe('the request differs from its reconstruction at $')
    expect(error).toMatchObject({ path: '$', expected: undefined, actual: undefined })
  })

  test('RunDiscardedError without a cause has none', () => {
    const error = new errors.RunDiscardedError({ reason: 'disposed', messageId: 'q' })
    expect(error.message).toBe('message "q" was disposed before a turn claimed it')
    expect(Object.hasOwn(error, 'cause')).toBe(false)
  })
})
