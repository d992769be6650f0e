/**
 * Cases with a real writer process over the same storage (the target's `spawnWriter`): a writer
 * frozen past its TTL writes nothing after a takeover and learns `LeaseLostError`; a writer killed
 * with SIGKILL mid-append or mid-turn leaves a log that reopens whole, with every acknowledged
 * event.
 *
 * @module
 */
import assert from 'node:assert/strict'
import { ErrorCode } from '../../errors/codes.js'
import type { PersistenceAdapter, StoredLog } from '../../persistence/persistence-adapter.js'
import { interruptedTurnClosers } from '../../session/interrupted-turn-closers.js'
import { eventsFrom, turnStart } from './conformance-events.js'
import { assertSameEvents, type ConformanceCase, expectResolves, jsonOf } from './conformance-support.js'
import type { ConformanceTarget } from './conformance-target.js'
import { startWriter, type WriterProcess } from './writer-process.js'
import { digestOfTexts, type WriterCommand, type WriterReply } from './writer-protocol.js'

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
/** Kills per crash case: each a fresh child, a fresh session and a random moment. */
const kills = 3
/**
 * The crashing child's lease: short, so the storage is free soon after the kill even without
 * `ageLease`, yet long enough that a child slowed by a busy machine keeps renewing it.
 */
const crashLease = { ttlMs: 2_000, heartbeatMs: 250 }

type Acked = Extract<WriterReply, { reply: 'acked' }>

function ackedOf(writer: WriterProcess): Acked[] {
  return writer.replies.filter((reply): reply is Acked => reply.reply === 'acked')
}

/** Asserts every acknowledged batch is in `log`, byte for byte. */
function assertAcked(log: StoredLog, acked: readonly Acked[], what: string): void {
  for (const ack of acked) {
    assert.ok(
      log.events.length > ack.last,
      `${what}: acknowledged seq ${ack.last} is in the log of ${log.events.length}`,
    )
    const texts = jsonOf(log.events.slice(ack.first, ack.last + 1))
    assert.equal(
      digestOfTexts(texts),
      ack.digest,
      `${what}: the acknowledged seqs ${ack.first}…${ack.last} are stored as written`,
    )
  }
}

/** Makes a dead writer's lease expire: at once with `ageLease`, else by waiting out its TTL. */
async function outliveLease(target: ConformanceTarget, sessionId: string): Promise<void> {
  if (target.ageLease !== undefined) await target.ageLease(sessionId)
  else await sleep(crashLease.ttlMs + 100)
}

/** Loads a log in a fresh instance, repairing a torn tail (under a lease) the way a resume does. */
async function reopenWhole(other: PersistenceAdapter, sessionId: string, what: string): Promise<StoredLog> {
  const log = await expectResolves(() => other.load(sessionId), `${what}: load after the kill`)
  if (log.torn === undefined) return log
  const lease = await expectResolves(() => other.acquire(sessionId), `${what}: acquire after the kill`)
  try {
    await expectResolves(() => other.commitRepair(sessionId, log.torn, []), `${what}: commitRepair of the torn tail`)
  } finally {
    await lease.release()
  }
  const repaired = await expectResolves(() => other.load(sessionId), `${what}: load after the repair`)
  assert.equal(repaired.torn, undefined, `${what}: no torn tail after the repair`)
  return repaired
}

async function withWriters(run: (start: () => Promise<WriterProcess>) => Promise<void>, target: ConformanceTarget) {
  const started: WriterProcess[] = []
  try {
    await run(async () => {
      const writer = await startWriter(target)
      started.push(writer)
      return writer
    })
  } finally {
    for (const writer of started) await writer.stop()
  }
}

const frozenWriterCase: ConformanceCase = {
  name: 'a writer process frozen past its TTL (SIGSTOP), taken over and woken (SIGCONT) writes nothing more and learns LeaseLostError naming the new owner',
  needs: ['spawnWriter'],
  timeoutMs: 30_000,
  async run({ target, reopen }) {
    // Short, so the freeze outlasts it quickly; the heartbeat often, so a busy machine does not
    // let it lapse before the freeze.
    const lease = { ttlMs: 1_000, heartbeatMs: 100 }
    await withWriters(async (start) => {
      const writer = await start()
      writer.send({ op: 'hold', sessionId: 'frozen', ...lease, everyMs: 50 })
      const held = (await writer.waitFor((reply) => reply.reply === 'held', 'its lease')) as Extract<
        WriterReply,
        { reply: 'held' }
      >
      const seen = ackedOf(writer).length
      await writer.waitFor((reply, index) => reply.reply === 'acked' && index > seen + 1, 'three appends')
      // Right after an ack, so it is frozen between two appends, not inside one.
      const last = writer.replies.length
      await writer.waitFor((reply, index) => reply.reply === 'acked' && index >= last, 'one more append')
      writer.signal('SIGSTOP')
      await sleep(lease.ttlMs + 300)
      const other = await reopen()
      const taken = await expectResolves(() => other.acquire('frozen'), 'the takeover of the frozen writer')
      assert.equal(taken.tookOver?.owner, held.owner, 'the takeover names the frozen owner')
      assert.ok(taken.epoch > held.epoch, `the takeover's epoch ${taken.epoch} is greater than ${held.epoch}`)
      const atTakeover = (await other.load('frozen')).events
      const ours = eventsFrom(atTakeover.length, [turnStart(1_000)])
      await expectResolves(
        () => other.append('frozen', ours, { expectedSeq: atTakeover.length, lease: taken }),
        'an append by the new owner',
      )
      writer.signal('SIGCONT')
      const error = (await writer.waitFor((reply) => reply.reply === 'error', 'the woken writer to fail')) as Extract<
        WriterReply,
        { reply: 'error' }
      >
      assert.equal(
        error.code,
        ErrorCode.LEASE_LOST,
        `the woken writer gets LeaseLostError, got ${error.name} ${error.code}: ${error.message}`,
      )
      assert.ok(
        error.holderOwner === taken.owner || error.signalHolderOwner === taken.owner,
        `the woken writer learns the new owner ${taken.owner} (its error names ${error.holderOwner}, its lease signal ${error.signalHolderOwner})`,
      )
      await writer.exited
      for (const ack of ackedOf(writer)) {
        assert.ok(ack.last < atTakeover.length, `the woken writer acknowledged seq ${ack.last} after the takeover`)
      }
      assertSameEvents(
        (await other.load('frozen')).events,
        [...atTakeover, ...ours],
        'the log: nothing from the woken writer',
      )
      await taken.release()
    }, target)
  },
}

/**
 * Sends `command` to a writer, waits for its first acknowledged write, kills it with SIGKILL at a
 * random moment within `withinMs` after that, and returns every write it acknowledged.
 */
async function killAfterFirstAck(
  writer: WriterProcess,
  command: WriterCommand,
  what: string,
  withinMs: number,
): Promise<Acked[]> {
  writer.send(command)
  await writer.waitFor((reply) => reply.reply === 'acked', `${what}: a first acknowledged write`)
  await sleep(Math.floor(Math.random() * withinMs))
  writer.signal('SIGKILL')
  await writer.exited
  return ackedOf(writer)
}

const killedAppendCase: ConformanceCase = {
  name: `a writer process killed with SIGKILL mid-append (${kills} kills) leaves a log that reopens whole with every acknowledged event`,
  needs: ['spawnWriter'],
  timeoutMs: 30_000,
  async run({ target, reopen }) {
    await withWriters(async (start) => {
      for (let round = 0; round < kills; round++) {
        const seed = Math.floor(Math.random() * 2 ** 32)
        const sessionId = `killed-append-${round}`
        const what = `kill ${round + 1} (seed ${seed})`
        const acked = await killAfterFirstAck(await start(), { op: 'append', sessionId, ...crashLease, seed }, what, 40)
        await outliveLease(target, sessionId)
        const log = await reopenWhole(await reopen(), sessionId, what)
        assertAcked(log, acked, what)
      }
    }, target)
  },
}

const killedTurnCase: ConformanceCase = {
  name: `a harness process killed with SIGKILL mid-turn (${kills} kills) resumes in a new process: every acknowledged event is there, the log balanced`,
  needs: ['spawnWriter'],
  timeoutMs: 30_000,
  async run({ target, reopen }) {
    await withWriters(async (start) => {
      for (let round = 0; round < kills; round++) {
        const seed = Math.floor(Math.random() * 2 ** 32)
        const sessionId = `killed-turn-${round}`
        const what = `kill ${round + 1} (seed ${seed})`
        const command = { op: 'turns', sessionId, ...crashLease, seed, windowMs: 2 } as const
        const acked = await killAfterFirstAck(await start(), command, what, 60)
        await outliveLease(target, sessionId)
        const resumer = await start()
        resumer.send({ op: 'resume', sessionId, ...crashLease })
        const outcome = await resumer.waitFor(
          (reply) => reply.reply === 'resumed' || reply.reply === 'error',
          `${what}: the resume`,
        )
        assert.equal(outcome.reply, 'resumed', `${what}: the resume in a new process: ${JSON.stringify(outcome)}`)
        await resumer.exited
        const log = await expectResolves(
          () => reopen().then((other) => other.load(sessionId)),
          `${what}: load after the resume`,
        )
        assert.equal(log.torn, undefined, `${what}: no torn tail after the resume`)
        assertAcked(log, acked, what)
        assert.deepEqual(
          interruptedTurnClosers(log.events),
          [],
          `${what}: every turn, step and call is closed after the resume`,
        )
      }
    }, target)
  },
}

/** The process cases. */
export const processCases: readonly ConformanceCase[] = [frozenWriterCase, killedAppendCase, killedTurnCase]
