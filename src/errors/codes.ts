/**
 * Every stable error code this library uses. Route on `error.code`, never on `error.message`.
 */
export const ErrorCode = {
  /** A function was called with a malformed argument. */
  INVALID_ARGUMENT: 'INVALID_ARGUMENT',
  /** An operation was attempted on a disposing or disposed context. */
  CONTEXT_DISPOSED: 'CONTEXT_DISPOSED',
  /** A service key already has a provider in the realm. */
  SERVICE_CONFLICT: 'SERVICE_CONFLICT',
  /** `ctx.get()` found no provider for a key. */
  SERVICE_MISSING: 'SERVICE_MISSING',
  /** Planning found required keys that no enabled entry provides. */
  SERVICES_MISSING: 'SERVICES_MISSING',
  /** An event name has no definition. */
  UNKNOWN_EVENT: 'UNKNOWN_EVENT',
  /** An event was dispatched with a mode other than its defined one. */
  EVENT_MODE_MISMATCH: 'EVENT_MODE_MISMATCH',
  /** An event name was defined twice with different modes or owners. */
  EVENT_CONFLICT: 'EVENT_CONFLICT',
  /** A waterfall listener called `next` more than once. */
  WATERFALL_NEXT: 'WATERFALL_NEXT',
  /** A scope link would create a cycle or is malformed. */
  SCOPE_LINK: 'SCOPE_LINK',
  /** A value passed as a plugin is not a valid plugin. */
  INVALID_PLUGIN: 'INVALID_PLUGIN',
  /** An entry's config failed its plugin's schema. */
  PLUGIN_CONFIG_INVALID: 'PLUGIN_CONFIG_INVALID',
  /** Plugin dependencies form a cycle. */
  PLUGIN_CYCLE: 'PLUGIN_CYCLE',
  /** A plugin failed to start; the start was rolled back. */
  PLUGIN_START_FAILED: 'PLUGIN_START_FAILED',
  /** The entries and patches cannot be composed. */
  COMPOSITION_INVALID: 'COMPOSITION_INVALID',
  /** A patch names an entry id that does not exist. */
  UNKNOWN_ENTRY: 'UNKNOWN_ENTRY',
  /** `createHarness()` options failed validation. */
  INVALID_OPTIONS: 'INVALID_OPTIONS',
  /** A configuration value failed validation. */
  CONFIG_INVALID: 'CONFIG_INVALID',
  /** zstd compression was asked for but is not available. */
  ZSTD_UNAVAILABLE: 'ZSTD_UNAVAILABLE',
  /** The harness was used after `close()`. */
  HARNESS_CLOSED: 'HARNESS_CLOSED',
  /** One or more steps of `close()` failed (every step still ran). */
  CLOSE_FAILED: 'CLOSE_FAILED',
  /** An optional peer dependency of a subpath is not installed. */
  MISSING_PEER: 'MISSING_PEER',
  /** An MCP server could not be connected, listed or mounted (`server`, `reason`). */
  MCP_SERVER_FAILED: 'MCP_SERVER_FAILED',
  /** A value is not lossless JSON (`path`, `reason`). */
  NOT_JSON: 'NOT_JSON',
  /** A session event envelope or append option is malformed (`field`). */
  INVALID_ENVELOPE: 'INVALID_ENVELOPE',
  /** A session event type is not in the catalog and not `ignorable`. */
  UNKNOWN_EVENT_TYPE: 'UNKNOWN_EVENT_TYPE',
  /** A reserved session event type (`session/end-seed`) was appended. */
  RESERVED_EVENT_TYPE: 'RESERVED_EVENT_TYPE',
  /** A session event's data failed its schema (`path`, `issues`). */
  INVALID_PAYLOAD: 'INVALID_PAYLOAD',
  /** A message event was appended without `surfaceOp`. */
  SURFACE_MARKER_REQUIRED: 'SURFACE_MARKER_REQUIRED',
  /** A non-message event carried `surfaceOp` or `sourceEventSeqs`. */
  SURFACE_MARKER_FORBIDDEN: 'SURFACE_MARKER_FORBIDDEN',
  /** A `surfaceOp` is neither `append` nor a well-formed replace. */
  INVALID_SURFACE_OP: 'INVALID_SURFACE_OP',
  /** `sourceEventSeqs` is malformed (`reason`). */
  INVALID_SOURCES: 'INVALID_SOURCES',
  /** A replace names a seq that is not a current surface node (`which`). */
  REPLACE_NOT_FOUND: 'REPLACE_NOT_FOUND',
  /** A replace range starts after its end in surface order. */
  REPLACE_REVERSED: 'REPLACE_REVERSED',
  /** A replace shadows nodes its `sourceEventSeqs` do not list (`missing`). */
  REPLACE_UNCOVERED: 'REPLACE_UNCOVERED',
  /** A replace would separate a tool call from its result. */
  REPLACE_SPLITS_TOOL_PAIR: 'REPLACE_SPLITS_TOOL_PAIR',
  /** A tool-result rewrite shadows more than one node. */
  REWRITE_NOT_SINGLE: 'REWRITE_NOT_SINGLE',
  /** A tool-result rewrite shadows a node that is not a tool result. */
  REWRITE_NOT_TOOL_RESULT: 'REWRITE_NOT_TOOL_RESULT',
  /** A tool-result rewrite changes more than the result content (`path`). */
  REWRITE_NOT_CONTENT_ONLY: 'REWRITE_NOT_CONTENT_ONLY',
  /** A turn was started while another is open. */
  TURN_OPEN: 'TURN_OPEN',
  /** A turn number is not the next one. */
  TURN_NUMBER: 'TURN_NUMBER',
  /** An event names a turn other than the open one. */
  TURN_MISMATCH: 'TURN_MISMATCH',
  /** An event needs an open turn and there is none. */
  NO_OPEN_TURN: 'NO_OPEN_TURN',
  /** A step is open where none may be. */
  STEP_OPEN: 'STEP_OPEN',
  /** A step number is not the next one. */
  STEP_NUMBER: 'STEP_NUMBER',
  /** An event names a step other than the open one. */
  STEP_MISMATCH: 'STEP_MISMATCH',
  /** An event needs an open step and there is none. */
  NO_OPEN_STEP: 'NO_OPEN_STEP',
  /** A step was ended with unanswered tool calls (`callIds`). */
  UNANSWERED_TOOL_CALL: 'UNANSWERED_TOOL_CALL',
  /** A tool result answers no started call of the open step. */
  UNKNOWN_TOOL_CALL: 'UNKNOWN_TOOL_CALL',
  /** A tool call id was requested or started twice in a step. */
  DUPLICATE_TOOL_CALL: 'DUPLICATE_TOOL_CALL',
  /** A message event reuses the id of an earlier message. */
  MESSAGE_ID_REUSED: 'MESSAGE_ID_REUSED',
  /** A `request/header`'s reason does not fit the log. */
  HEADER_REASON: 'HEADER_REASON',
  /** The session was disposed. */
  SESSION_DISPOSED: 'SESSION_DISPOSED',
  /** An append was made from inside a guard or observer of the same session. */
  REENTRANT_APPEND: 'REENTRANT_APPEND',
  /** A commit guard vetoed an append (`guard`). */
  APPEND_VETOED: 'APPEND_VETOED',
  /** A `session/created` listener vetoed a new session. */
  CREATE_VETOED: 'CREATE_VETOED',
  /** A session header is malformed (`field`). */
  INVALID_HEADER: 'INVALID_HEADER',
  /** A session id is malformed. */
  INVALID_SESSION_ID: 'INVALID_SESSION_ID',
  /** A session with that id is live. */
  SESSION_EXISTS: 'SESSION_EXISTS',
  /** No live session has that id (or the object is not the live one). */
  SESSION_NOT_FOUND: 'SESSION_NOT_FOUND',
  /** A `session/flush` listener failed (`errors`). */
  FLUSH_FAILED: 'FLUSH_FAILED',
  /** A `session/disposed` listener failed (`errors`). */
  DISPOSE_FAILED: 'DISPOSE_FAILED',
  /** A fork boundary is not a seq of the source (`at`, `lastSeq`). */
  INVALID_BOUNDARY: 'INVALID_BOUNDARY',
  /** A fork boundary falls inside an open turn (`turn`, `nearestBalancedSeq`). */
  OPEN_TURN: 'OPEN_TURN',
  /** A registered session event type name is malformed. */
  INVALID_EVENT_TYPE_NAME: 'INVALID_EVENT_TYPE_NAME',
  /** A session event type is already core or registered. */
  DUPLICATE_EVENT_TYPE: 'DUPLICATE_EVENT_TYPE',
  /** A plugin event type asked to be a surface type. */
  SURFACE_NOT_ALLOWED: 'SURFACE_NOT_ALLOWED',
  /** The session is live in this harness; the operation needs it cold. */
  SESSION_LIVE: 'SESSION_LIVE',
  /** A live session has an open turn; its log is not balanced yet. */
  LIVE_TURN_OPEN: 'LIVE_TURN_OPEN',
  /** The session id is reserved by a preparation. */
  SESSION_RESERVED: 'SESSION_RESERVED',
  /** The stored log has a torn tail; load (repair) it before appending. */
  REPAIR_REQUIRED: 'REPAIR_REQUIRED',
  /** A storage write failed (`cause`). */
  WRITE_FAILED: 'WRITE_FAILED',
  /** A storage call took longer than the write timeout; it counts as failed (`operation`, `timeoutMs`). */
  WRITE_TIMEOUT: 'WRITE_TIMEOUT',
  /** A failed write could not be rolled back (`errors: [write, rollback]`). */
  ROLLBACK_FAILED: 'ROLLBACK_FAILED',
  /** The persistence adapter was closed. */
  CLOSED: 'CLOSED',
  /** A stored header is damaged. */
  CORRUPT_HEADER: 'CORRUPT_HEADER',
  /** A stored log is damaged and valid records follow the damage. */
  CORRUPT_LOG: 'CORRUPT_LOG',
  /** A stored record carries an unexpected seq. */
  SEQ_MISMATCH: 'SEQ_MISMATCH',
  /** A stored header names another session. */
  IDENTITY_MISMATCH: 'IDENTITY_MISMATCH',
  /** A stored event fails the rules of a live append (`cause`). */
  INVALID_EVENT: 'INVALID_EVENT',
  /** Two log files exist for one session. */
  DUPLICATE_LOG: 'DUPLICATE_LOG',
  /** A repair left a torn tail or closers behind. */
  REPAIR_INCOMPLETE: 'REPAIR_INCOMPLETE',
  /** A log is stored in a newer format than this version reads. */
  FORMAT_TOO_NEW: 'FORMAT_TOO_NEW',
  /** A log is stored in an older format no upgrader reads. */
  FORMAT_TOO_OLD: 'FORMAT_TOO_OLD',
  /** A database schema is newer than this version reads. */
  SCHEMA_TOO_NEW: 'SCHEMA_TOO_NEW',
  /** Another writer holds the session lease. */
  SESSION_LOCKED: 'SESSION_LOCKED',
  /** The lease to write the session was lost. */
  LEASE_LOST: 'LEASE_LOST',
  /** The stored log is not where the writer expected it. */
  SEQ_CONFLICT: 'SEQ_CONFLICT',
  /** Unwritten events reached the high-water mark and the last write failed. */
  PERSISTENCE_BACKPRESSURE: 'PERSISTENCE_BACKPRESSURE',
  /** Model failure: a 429 that is not a quota problem. */
  RATE_LIMIT: 'RATE_LIMIT',
  /** Model failure: a 5xx, an in-stream server error, or an `insufficient_system_resource` finish. */
  SERVER: 'SERVER',
  /** Model failure: the idle watchdog expired, or a 408. */
  TIMEOUT: 'TIMEOUT',
  /** Model failure: DNS, refused, reset, TLS or proxy failure; a body read failure. */
  TRANSPORT: 'TRANSPORT',
  /** Model failure: the call completed without content, or the response had no body. */
  EMPTY_RESPONSE: 'EMPTY_RESPONSE',
  /** Model failure: 401, 403, an invalid key. */
  AUTH: 'AUTH',
  /** Model failure: balance, credit or quota exhausted. */
  QUOTA: 'QUOTA',
  /** Model failure: the request is longer than the model's context window. */
  CONTEXT_WINDOW_EXCEEDED: 'CONTEXT_WINDOW_EXCEEDED',
  /** Model failure: a 400, 413 or 422 the other codes do not cover; a request that fails validation. */
  INVALID_REQUEST: 'INVALID_REQUEST',
  /** Model failure: the provider's content filter stopped the output. */
  CONTENT_FILTER: 'CONTENT_FILTER',
  /** Model failure: the stream ended before completion. */
  STREAM_CLOSED: 'STREAM_CLOSED',
  /** Model failure: invalid JSON or event, wrong content type, a protocol violation. */
  MALFORMED_RESPONSE: 'MALFORMED_RESPONSE',
  /** Model failure: the caller aborted. */
  ABORTED: 'ABORTED',
  /** Model failure: the scripted model has no reply left for a request. */
  SCRIPT_EXHAUSTED: 'SCRIPT_EXHAUSTED',
  /** Model failure: no API key at the configured reference. */
  MISSING_CREDENTIAL: 'MISSING_CREDENTIAL',
  /** Model failure: the API key is not header-safe. */
  INVALID_CREDENTIAL: 'INVALID_CREDENTIAL',
  /** Model failure: the reasoning effort is not one the model offers. */
  UNSUPPORTED_REASONING_EFFORT: 'UNSUPPORTED_REASONING_EFFORT',
  /** Model failure: content the model does not accept (e.g. an image). */
  UNSUPPORTED_CONTENT: 'UNSUPPORTED_CONTENT',
  /** Model failure: no adapter serves the provider. */
  NO_ADAPTER: 'NO_ADAPTER',
  /** Model failure: a thrown value that carried no model failure. */
  UNKNOWN: 'UNKNOWN',
  /** A model provider id is malformed. */
  INVALID_PROVIDER: 'INVALID_PROVIDER',
  /** A value registered as a model adapter has no `stream` function. */
  INVALID_ADAPTER: 'INVALID_ADAPTER',
  /** A provider is already routed in that layer of the model registry. */
  DUPLICATE_PROVIDER: 'DUPLICATE_PROVIDER',
  /** A prepared model call was streamed a second time. */
  PREPARED_CALL_REUSED: 'PREPARED_CALL_REUSED',
  /** A prepared model call was streamed with another provider or model. */
  PREPARED_CALL_MISMATCH: 'PREPARED_CALL_MISMATCH',
  /** `assertComplete()`: scripted replies were left unused. */
  SCRIPT_INCOMPLETE: 'SCRIPT_INCOMPLETE',
  /** `assertComplete()`: a request came after the script ran out. */
  SCRIPT_OVERRUN: 'SCRIPT_OVERRUN',
  /** A tool declaration failed validation (`defineTool`). */
  INVALID_TOOL_DEFINITION: 'INVALID_TOOL_DEFINITION',
  /** A tool name is already registered in that layer (or twice in one batch). */
  TOOL_CONFLICT: 'TOOL_CONFLICT',
  /** A tool restriction is malformed or names tools the scope does not inherit. */
  INVALID_RESTRICTION: 'INVALID_RESTRICTION',
  /** `approve()` named an approval that is not pending. */
  APPROVAL_NOT_PENDING: 'APPROVAL_NOT_PENDING',
  /** Tool result: no visible tool has the name. */
  UNKNOWN_TOOL: 'UNKNOWN_TOOL',
  /** Tool result: the arguments are not a JSON object or fail the input schema. */
  INVALID_ARGUMENTS: 'INVALID_ARGUMENTS',
  /** Tool result: a policy, guard or approval denied the call. */
  TOOL_DENIED: 'TOOL_DENIED',
  /** Tool result: the body threw or returned an invalid or error result. */
  TOOL_FAILED: 'TOOL_FAILED',
  /** Tool result: the call's deadline expired. */
  TOOL_TIMEOUT: 'TOOL_TIMEOUT',
  /** Tool result: the turn was cancelled before the call started. */
  TOOL_ABORTED_BEFORE_DISPATCH: 'TOOL_ABORTED_BEFORE_DISPATCH',
  /** Tool result: the turn was cancelled while the call ran. */
  TOOL_ABORTED: 'TOOL_ABORTED',
  /** Tool result: the tool scheduler itself failed. */
  TOOL_SCHEDULER_FAILED: 'TOOL_SCHEDULER_FAILED',
  /** A system-prompt contribution is malformed. */
  INVALID_PROMPT_CONTRIBUTION: 'INVALID_PROMPT_CONTRIBUTION',
  /** A system-prompt contribution name is already registered in that layer. */
  DUPLICATE_PROMPT_CONTRIBUTION: 'DUPLICATE_PROMPT_CONTRIBUTION',
  /** A variable provider returned something other than a string or `undefined`. */
  INVALID_VARIABLE_VALUE: 'INVALID_VARIABLE_VALUE',
  /** Two tool schemas with one name reached an assembly. */
  DUPLICATE_TOOL_SCHEMA: 'DUPLICATE_TOOL_SCHEMA',
  /** More than one section claims to be the complete prompt. */
  MULTIPLE_COMPLETE_SECTIONS: 'MULTIPLE_COMPLETE_SECTIONS',
  /** `toolOrder` names a tool nobody knows. */
  UNKNOWN_TOOL_ORDER_ENTRY: 'UNKNOWN_TOOL_ORDER_ENTRY',
  /** A `system-prompt/assemble` listener returned an invalid assembly. */
  INVALID_ASSEMBLY: 'INVALID_ASSEMBLY',
  /** A text, variable or tool provider threw during assembly. */
  CONTRIBUTION_FAILED: 'CONTRIBUTION_FAILED',
  /** A template variable reference is malformed. */
  PROMPT_VARIABLE_MALFORMED: 'PROMPT_VARIABLE_MALFORMED',
  /** A template names a variable that is not registered. */
  PROMPT_VARIABLE_UNKNOWN: 'PROMPT_VARIABLE_UNKNOWN',
  /** A template names a variable that has no value in this assembly. */
  PROMPT_VARIABLE_UNDEFINED: 'PROMPT_VARIABLE_UNDEFINED',
  /** No preset has the name. */
  UNKNOWN_PRESET: 'UNKNOWN_PRESET',
  /** A resume asked for another preset than the session recorded. */
  PRESET_MISMATCH: 'PRESET_MISMATCH',
  /** A preset's plugins or setup failed while the harness started. */
  PRESET_SETUP_FAILED: 'PRESET_SETUP_FAILED',
  /** `initiator.require()` found no agent frame. */
  NO_INITIATOR: 'NO_INITIATOR',
  /** The harness is closing: no new initiator frames. */
  INITIATOR_CLOSED: 'INITIATOR_CLOSED',
  /** A user message input is malformed. */
  INVALID_MESSAGE: 'INVALID_MESSAGE',
  /** A message id is already pending in the agent's inbox. */
  DUPLICATE_MESSAGE_ID: 'DUPLICATE_MESSAGE_ID',
  /** The agent was disposed. */
  AGENT_DISPOSED: 'AGENT_DISPOSED',
  /** The agent is running or in maintenance. */
  AGENT_BUSY: 'AGENT_BUSY',
  /** No provider or model for a request. */
  MISSING_MODEL: 'MISSING_MODEL',
  /** A request differs from what the log rebuilds. */
  RECONSTRUCTION_MISMATCH: 'RECONSTRUCTION_MISMATCH',
  /** The log holds no such request attempt. */
  REQUEST_NOT_FOUND: 'REQUEST_NOT_FOUND',
  /** A live agent already drives the session. */
  AGENT_EXISTS: 'AGENT_EXISTS',
  /** The agent's creation was aborted by the caller's signal. */
  AGENT_CREATION_ABORTED: 'AGENT_CREATION_ABORTED',
  /** `openAgent` found the agent live with other overrides than the ones given. */
  AGENT_OVERRIDES_MISMATCH: 'AGENT_OVERRIDES_MISMATCH',
  /** No turn of the agent claimed the run's message. */
  RUN_DISCARDED: 'RUN_DISCARDED',
  /** A run's structured answer is not JSON matching its `output` schema. */
  OUTPUT_INVALID: 'OUTPUT_INVALID',
  /** A stream consumer fell more than `highWaterMark` events behind. */
  STREAM_OVERFLOW: 'STREAM_OVERFLOW',
  /** A `Last-Event-ID` is not a seq, or names no event of the session's log. */
  INVALID_LAST_EVENT_ID: 'INVALID_LAST_EVENT_ID',
  /** A compaction of the session is already running in this process. */
  COMPACTION_BUSY: 'COMPACTION_BUSY',
  /** The compacted span changed on the surface while the summary was made. */
  COMPACTION_STALE: 'COMPACTION_STALE',
  /** The compaction's signal aborted (`cause` = the abort reason). */
  COMPACTION_ABORTED: 'COMPACTION_ABORTED',
  /** The summarizer failed (`cause` = its error, an `LlmError` for a model failure). */
  SUMMARY_FAILED: 'SUMMARY_FAILED',
  /** The summarizer returned no text. */
  SUMMARY_EMPTY: 'SUMMARY_EMPTY',
  /** The framed summary is not smaller than what it would replace. */
  SUMMARY_NOT_SMALLER: 'SUMMARY_NOT_SMALLER',
  /** Appending the summary or its replacement was rejected (`cause`). */
  COMPACTION_COMMIT_FAILED: 'COMPACTION_COMMIT_FAILED',
  /** A `compactRange` span is not a usable surface span (`reason`). */
  INVALID_RANGE: 'INVALID_RANGE',
  /** A submit with `busy: 'reject'` found the session mid-turn or with messages pending; nothing was written. */
  SESSION_BUSY: 'SESSION_BUSY',
  /** A submitted message is larger than the client's `maxMessageBytes`; nothing was written. */
  MESSAGE_TOO_LARGE: 'MESSAGE_TOO_LARGE',
} as const

/** The union of every {@link ErrorCode} value. */
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode]
