/**
 * A persistence adapter of its own: every session log is a
 * byte string in a `Map` — a header line, then one JSON line per event — the shape a key-value
 * store, a blob store or a database row would give you. It passes `runPersistenceConformance`
 * from `yoke/testing` (see test/examples/custom-persistence.test.ts), which is how you know an
 * adapter is right: crashes, torn tails, damage, leases and fencing included.
 *
 * Run plainly, it stores one turn through a harness, "restarts" with a second harness over the
 * same storage, and resumes the session for turn 2.
 *
 * Run: `npm run example -- custom-persistence`
 */
import { createHash, randomUUID } from 'node:crypto'
import { pathToFileURL } from 'node:url'
import {
  createHarness,
  ErrorCode,
  InvalidArgumentError,
  isSessionId,
  type Lease,
  LeaseLostError,
  type LoadOptions,
  type PersistenceAdapter,
  PersistenceCorruptionError,
  PersistenceError,
  SeqConflictError,
  type SessionEvent,
  type SessionHeader,
  SessionHeaderError,
  SessionLockedError,
  type StoredLog,
  type TornTail,
} from 'yoke'
import { scriptedModel, text } from 'yoke/testing'

/** What several adapter instances share, as several processes share one database. */
export interface MapStorage {
  /** The logs: header line, then one line per event, each ending with `\n`. */
  readonly logs: Map<string, Buffer>
  /**
   * Who holds each session's lease (its token, owner id and epoch), until when (a holder renews
   * it by a heartbeat), and how to tell the holder it lost it.
   */
  readonly leases: Map<string, MapLease>
  /** The last epoch of each session: a takeover gets the next one, so epochs only grow. */
  readonly epochs: Map<string, number>
}

/** One lease as the storage keeps it. */
export interface MapLease {
  readonly token: string
  readonly owner: string
  readonly epoch: number
  readonly acquiredAt: number
  /** The lease is expired from this time on (epoch ms), unless a heartbeat moves it. */
  expiresAt: number
  readonly controller: AbortController
}

/** A fresh, empty storage. */
export function createMapStorage(): MapStorage {
  return { logs: new Map(), leases: new Map(), epochs: new Map() }
}

/** How long a lease lives without a heartbeat, and how often its holder renews it. */
const LEASE_TTL_MS = 30_000
const HEARTBEAT_MS = 10_000

const newline = 0x0a
const encodeLines = (values: readonly unknown[]): Buffer =>
  Buffer.from(values.map((value) => `${JSON.stringify(value)}\n`).join(''))
/** The revision is a hash of the bytes: equal for equal storage, new after every change. */
const revisionOf = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex').slice(0, 16)

/** A log read back: the header, the committed events, and what follows them when anything does. */
interface Scan {
  readonly header: SessionHeader
  readonly events: SessionEvent[]
  /** Where the committed events end (the bytes a repair keeps). */
  readonly committedBytes: number
  readonly torn?: TornTail
}

/**
 * Reads a log. A last line without its `\n` is a torn tail (a crash mid-write): tolerated, and a
 * repair drops it. A complete line that is not the next event is damage: an error, unless
 * `truncateAtCorruption` asks for it as a `corrupt` tail.
 */
function scan(sessionId: string, bytes: Buffer, truncateAtCorruption: boolean): Scan {
  const location = `map:${sessionId}`
  const headerEnd = bytes.indexOf(newline)
  let header: SessionHeader | undefined
  try {
    const parsed: unknown = headerEnd === -1 ? undefined : JSON.parse(bytes.toString('utf8', 0, headerEnd))
    const candidate = parsed as Partial<SessionHeader> | undefined
    if (candidate?.version === 1 && candidate.id === sessionId) header = parsed as SessionHeader
  } catch {}
  if (header === undefined) {
    throw new PersistenceCorruptionError({
      code: ErrorCode.CORRUPT_HEADER,
      sessionId,
      detail: 'the header line is damaged',
      location,
      offset: 0,
      line: 1,
    })
  }
  const events: SessionEvent[] = []
  const revision = revisionOf(bytes)
  for (let start = headerEnd + 1, line = 2; start < bytes.length; line++) {
    const end = bytes.indexOf(newline, start)
    const droppedBytes = bytes.length - start
    if (end === -1) {
      const torn: TornTail = {
        kind: 'torn',
        defect: 'unterminated',
        offset: start,
        line,
        droppedBytes,
        recovered: [],
        revision,
      }
      return { header, events, committedBytes: start, torn }
    }
    let event: SessionEvent | undefined
    try {
      const parsed = JSON.parse(bytes.toString('utf8', start, end)) as Partial<SessionEvent> | null
      if (parsed?.seq === events.length && typeof parsed.type === 'string') event = parsed as SessionEvent
    } catch {}
    if (event === undefined) {
      if (!truncateAtCorruption) {
        const detail = `line ${line} is not event seq ${events.length}`
        throw new PersistenceCorruptionError({
          code: ErrorCode.CORRUPT_LOG,
          sessionId,
          detail,
          location,
          offset: start,
          line,
          seq: events.length,
          defect: 'unparsable',
        })
      }
      const torn: TornTail = {
        kind: 'corrupt',
        defect: 'unparsable',
        offset: start,
        line,
        droppedBytes,
        recovered: [],
        revision,
      }
      return { header, events, committedBytes: start, torn }
    }
    events.push(event)
    start = end + 1
  }
  return { header, events, committedBytes: bytes.length }
}

/** Throws unless `events` are seqs `first`, `first + 1`, … (naming the first bad index). */
function checkContiguous(events: readonly SessionEvent[], first: number, argument: string): void {
  events.forEach((event, index) => {
    if (event?.seq !== first + index) {
      throw new InvalidArgumentError({
        argument,
        reason: `${argument}[${index}].seq must be ${first + index}`,
        value: events,
      })
    }
  })
}

/**
 * A persistence adapter over a {@link MapStorage}. Give several instances the same storage to
 * model several processes (a lease held by one excludes the others).
 */
export function mapPersistence(storage: MapStorage): PersistenceAdapter {
  /** Headers registered by `create`; the first append stores them (create writes nothing durable). */
  const registered = new Map<string, SessionHeader>()
  /** The leases this instance holds, by token. */
  const mine = new Map<string, { readonly lease: Lease; readonly controller: AbortController }>()
  /** This instance's owner id: random, never a pid (a restarted container has the same pid). */
  const owner = randomUUID()
  // The heartbeat: renew every lease this instance holds (a real adapter writes its lease row).
  const heartbeat = setInterval(() => {
    for (const { lease } of mine.values()) {
      const row = storage.leases.get(lease.sessionId)
      if (row?.token === lease.token) row.expiresAt = Date.now() + LEASE_TTL_MS
    }
  }, HEARTBEAT_MS)
  heartbeat.unref()
  let closed = false

  /** Every call starts here: closed adapters refuse, and ids must be storable (1–128 of [A-Za-z0-9_.-]). */
  function check(sessionId: string): void {
    if (closed) throw new PersistenceError({ code: ErrorCode.CLOSED, detail: 'the map adapter is closed' })
    if (!isSessionId(sessionId))
      throw new PersistenceError({
        code: ErrorCode.INVALID_SESSION_ID,
        detail: `cannot store session id ${JSON.stringify(sessionId)}`,
      })
  }
  /**
   * Fencing: a write needs this instance's current lease for that session. A lease another
   * instance took over (after it expired) is lost: its holder learns it here, through its signal.
   */
  function checkLease(sessionId: string, lease: Lease | undefined): void {
    const found =
      lease === undefined
        ? [...mine.values()].find((entry) => entry.lease.sessionId === sessionId)
        : mine.get(lease.token)
    // Only the lease object this instance handed out counts; a copy carrying its token does not.
    const held = lease === undefined || found?.lease === lease ? found : undefined
    if (
      held !== undefined &&
      held.lease.sessionId === sessionId &&
      storage.leases.get(sessionId)?.token === held.lease.token &&
      // A holder past its TTL writes nothing: another instance may take it over at any moment.
      (storage.leases.get(sessionId)?.expiresAt ?? 0) > Date.now()
    )
      return
    const lost = new LeaseLostError({
      code: ErrorCode.LEASE_LOST,
      sessionId,
      detail: 'this instance holds no live lease for it; nothing was written',
    })
    if (held !== undefined && held.lease.sessionId === sessionId) {
      mine.delete(held.lease.token)
      held.controller.abort(lost)
    }
    throw lost
  }
  function stored(sessionId: string): Buffer {
    const bytes = storage.logs.get(sessionId)
    if (bytes === undefined)
      throw new PersistenceError({ code: ErrorCode.SESSION_NOT_FOUND, sessionId, detail: 'no stored log' })
    return bytes
  }

  return {
    name: 'map',

    async create(header) {
      check(header.id)
      if (header.version !== 1) {
        throw new SessionHeaderError({
          code: ErrorCode.INVALID_HEADER,
          sessionId: header.id,
          detail: 'version must be 1',
          field: 'version',
        })
      }
      if (storage.logs.has(header.id) || registered.has(header.id)) {
        throw new PersistenceError({
          code: ErrorCode.SESSION_EXISTS,
          sessionId: header.id,
          detail: 'already stored or registered',
        })
      }
      registered.set(header.id, header)
    },

    // The checks run in the contract's order: lease, empty batch, seqs, session, expected seq.
    async append(sessionId, events, { expectedSeq, lease }) {
      check(sessionId)
      checkLease(sessionId, lease)
      if (events.length === 0) return
      checkContiguous(events, expectedSeq, 'events')
      const header = registered.get(sessionId)
      const bytes = header === undefined ? stored(sessionId) : undefined
      const log = bytes === undefined ? undefined : scan(sessionId, bytes, false)
      if (log?.torn !== undefined) {
        throw new PersistenceError({
          code: ErrorCode.REPAIR_REQUIRED,
          sessionId,
          detail: 'the log has a torn tail; repair it first',
        })
      }
      const storedSeq = log?.events.length ?? 0
      // Idempotent: a batch sent again after its reply was lost is already stored as it is, so it succeeds.
      const stale = log?.events.slice(expectedSeq, expectedSeq + events.length) ?? []
      if (expectedSeq < storedSeq && encodeLines(stale).equals(encodeLines(events))) return
      if (expectedSeq !== storedSeq) {
        throw new SeqConflictError({
          code: ErrorCode.SEQ_CONFLICT,
          sessionId,
          detail: `the log continues at seq ${storedSeq}`,
          expectedSeq,
          storedSeq,
        })
      }
      if (header !== undefined && storage.logs.has(sessionId)) {
        throw new PersistenceError({
          code: ErrorCode.SESSION_EXISTS,
          sessionId,
          detail: 'another writer stored it first',
        })
      }
      // One `set` is the atomic, durable write: a batch is stored whole or not at all.
      storage.logs.set(sessionId, Buffer.concat([bytes ?? encodeLines([header]), encodeLines(events)]))
      registered.delete(sessionId)
    },

    async load(sessionId, options: LoadOptions = {}): Promise<StoredLog> {
      check(sessionId)
      if (options.signal?.aborted === true) throw options.signal.reason
      const bytes = stored(sessionId)
      const { header, events, torn } = scan(sessionId, bytes, options.truncateAtCorruption === true)
      return {
        header,
        events,
        revision: revisionOf(bytes),
        location: `map:${sessionId}`,
        ...(torn === undefined ? {} : { torn }),
      }
    },

    // Crash repair: cut the tail it was shown (if the log is still as it was read), add the closers.
    async commitRepair(sessionId, torn, closers) {
      check(sessionId)
      checkLease(sessionId, undefined)
      if (torn === undefined && closers.length === 0) return
      const bytes = stored(sessionId)
      if (torn !== undefined && torn.revision !== revisionOf(bytes)) {
        throw new SeqConflictError({
          code: ErrorCode.SEQ_CONFLICT,
          sessionId,
          detail: 'the log changed since it was read',
          expectedRevision: torn.revision,
        })
      }
      const log = scan(sessionId, bytes, torn?.kind === 'corrupt')
      if (torn === undefined && log.torn !== undefined) {
        throw new PersistenceError({
          code: ErrorCode.REPAIR_REQUIRED,
          sessionId,
          detail: 'the log has a tail the repair was not shown',
        })
      }
      checkContiguous(closers, log.events.length, 'closers')
      storage.logs.set(sessionId, Buffer.concat([bytes.subarray(0, log.committedBytes), encodeLines(closers)]))
    },

    async readFrom(sessionId, fromSeq, options = {}) {
      check(sessionId)
      if (options.signal?.aborted === true) throw options.signal.reason
      const { header, events } = scan(sessionId, stored(sessionId), false)
      return { header, events: events.filter((event) => event.seq >= fromSeq) }
    },

    async list(options = {}) {
      if (closed) throw new PersistenceError({ code: ErrorCode.CLOSED, detail: 'the map adapter is closed' })
      if (options.signal?.aborted === true) throw options.signal.reason
      const headers: SessionHeader[] = []
      const damaged: PersistenceCorruptionError[] = []
      for (const sessionId of [...storage.logs.keys()].sort()) {
        try {
          headers.push(scan(sessionId, stored(sessionId), true).header)
        } catch (error) {
          if (!PersistenceCorruptionError.is(error)) throw error
          damaged.push(error)
        }
      }
      return { headers, damaged }
    },

    async delete(sessionId) {
      check(sessionId)
      const holder = storage.leases.get(sessionId)
      if (holder !== undefined && !mine.has(holder.token) && holder.expiresAt > Date.now()) {
        throw new SessionLockedError({
          code: ErrorCode.SESSION_LOCKED,
          sessionId,
          detail: 'another instance holds its lease',
        })
      }
      const wasRegistered = registered.delete(sessionId)
      if (!storage.logs.delete(sessionId) && !wasRegistered) stored(sessionId)
    },

    async acquire(sessionId) {
      check(sessionId)
      const now = Date.now()
      const held = storage.leases.get(sessionId)
      if (held !== undefined && held.expiresAt > now) {
        throw new SessionLockedError({
          code: ErrorCode.SESSION_LOCKED,
          sessionId,
          detail: `owner ${held.owner} (epoch ${held.epoch}) holds its lease`,
          holder: { pid: process.pid, host: 'map', acquiredAt: held.acquiredAt, owner: held.owner, epoch: held.epoch },
        })
      }
      // An expired holder is taken over: told at once (if it is in this process) and fenced by its token.
      const epoch = (storage.epochs.get(sessionId) ?? 0) + 1
      storage.epochs.set(sessionId, epoch)
      if (held !== undefined) {
        held.controller.abort(
          new LeaseLostError({ code: ErrorCode.LEASE_LOST, sessionId, detail: `taken over by owner ${owner}`, epoch }),
        )
      }
      const controller = new AbortController()
      const token = randomUUID()
      const lease: Lease = {
        sessionId,
        token,
        owner,
        epoch,
        signal: controller.signal,
        ...(held === undefined
          ? {}
          : {
              tookOver: {
                pid: process.pid,
                host: 'map',
                acquiredAt: held.acquiredAt,
                owner: held.owner,
                epoch: held.epoch,
              },
            }),
        release: async () => {
          mine.delete(token)
          if (storage.leases.get(sessionId)?.token !== token) return
          storage.leases.delete(sessionId)
          controller.abort(
            new LeaseLostError({ code: ErrorCode.LEASE_LOST, sessionId, detail: 'the lease was released' }),
          )
        },
      }
      storage.leases.set(sessionId, { token, owner, epoch, acquiredAt: now, expiresAt: now + LEASE_TTL_MS, controller })
      mine.set(token, { lease, controller })
      return lease
    },

    async close() {
      if (closed) return
      clearInterval(heartbeat)
      for (const { lease } of [...mine.values()]) await lease.release()
      registered.clear()
      closed = true
    },
  }
}

// The demo, when run as a program (not when the test imports the adapter).
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const storage = createMapStorage()
  const first = await createHarness({
    persistence: mapPersistence(storage),
    model: scriptedModel([text('Stored in a Map.')]),
  })
  const agent = await first.createAgent({ sessionId: 'map-demo' })
  console.log(
    `turn ${(await agent.run('Where do you keep our conversation?')).turn}: stored ${storage.logs.get('map-demo')?.length} bytes`,
  )
  await first.close()

  // A "restart": a new harness, a new adapter instance, the same storage.
  const second = await createHarness({
    persistence: mapPersistence(storage),
    model: scriptedModel([text('Still in the Map.')]),
  })
  const resumed = await second.resumeAgent('map-demo')
  const result = await resumed.run('And now?')
  console.log(`turn ${result.turn} ${result.reason.kind}: ${result.text} (${resumed.session.length} events)`)
  await second.close()
}
