/**
 * A `session/created` veto after persistence has bound the session: only the
 * listeners that saw the session get `session/disposed` (with `vetoed: true`), and persistence
 * drops the session instead of writing it: nothing stored, its lease (fresh, or the one a resume
 * prepared) released, the id free in storage too; `close()` waits for a release still in flight.
 *
 * @module
 */
import { existsSync } from 'node:fs'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { createHarness, definePlugin, type Harness, type HarnessOptions, SessionVetoError } from 'yoke'
import type { SessionDisposedPayload } from '../../src/session/index.js'
import { scriptedModel, text } from 'yoke/testing'
import { rejectionOf, thrownBy } from '../helpers/outcomes.js'
import { recordingLogger } from '../helpers/recording-logger.js'
import { logOf, TE, TS } from '../session/builders.js'

let dir: string
const harnesses: Harness[] = []

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'yoke-vetoed-'))
})

afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close()
  await rm(dir, { recursive: true, force: true })
})

async function harnessWith(options: HarnessOptions = {}): Promise<Harness> {
  const harness = await createHarness({ persistence: { dir }, logger: recordingLogger(), ...options })
  harnesses.push(harness)
  return harness
}

/** A plugin (started after the persistence entry) whose `session/created` listener vetoes `ids`. */
function vetoing(...ids: string[]) {
  return definePlugin({
    name: 'vetoing',
    apply(ctx) {
      ctx.on('session/created', ({ session }) => {
        if (ids.includes(session.id)) throw new Error(`no ${session.id}`)
      })
    },
  })
}

/** Resolves once `done()` holds, polling; fails after two seconds. */
async function eventually(done: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 2_000
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

/** Stores session `id` with one completed turn, through its own harness. */
async function storeOneTurn(id: string): Promise<void> {
  const harness = await createHarness({
    persistence: { dir },
    model: scriptedModel([text('stored')]),
    logger: recordingLogger(),
  })
  const agent = await harness.createAgent({ sessionId: id })
  await agent.run('hi')
  await harness.close()
}

describe('session/disposed after a veto', () => {
  test('reaches the listeners that saw the session, with vetoed: true, and no later one', async () => {
    const seen: string[] = []
    const listener = (name: string) =>
      definePlugin({
        name,
        apply(ctx) {
          ctx.on('session/created', ({ session }) => {
            seen.push(`${name} created ${session.id}`)
          })
          ctx.on('session/disposed', ({ session, vetoed }: SessionDisposedPayload) => {
            seen.push(`${name} disposed ${session.id} vetoed=${vetoed}`)
          })
        },
      })
    const harness = await harnessWith({ plugins: [listener('before'), vetoing('s1'), listener('after')] })
    const veto = thrownBy(() => harness.sessions.create({ id: 's1' }))
    expect(SessionVetoError.is(veto)).toBe(true)
    expect(veto).toMatchObject({ code: 'CREATE_VETOED', sessionId: 's1', cause: new Error('no s1') })
    await eventually(() => seen.length === 2, 'the vetoed session is disposed')
    expect(seen).toEqual(['before created s1', 'before disposed s1 vetoed=true'])
    expect(harness.sessions.get('s1')).toBeUndefined()
    // A normal dispose says nothing of a veto.
    const live = harness.sessions.create({ id: 's2' })
    await harness.sessions.dispose(live)
    expect(seen.slice(2)).toEqual([
      'before created s2',
      'after created s2',
      'before disposed s2 vetoed=undefined',
      'after disposed s2 vetoed=undefined',
    ])
  })
})

describe('a dispose requested during the vetoed dispatch', () => {
  test('announces the session once: the veto’s session/disposed (vetoed: true) only', async () => {
    const seen: string[] = []
    let disposing: Promise<void> | undefined
    const disposer = definePlugin({
      name: 'disposer',
      apply(ctx) {
        ctx.on('session/created', ({ session }) => {
          disposing = ctx.sessions.dispose(session)
        })
        ctx.on('session/disposed', ({ session, vetoed }: SessionDisposedPayload) => {
          seen.push(`${session.id} vetoed=${vetoed}`)
        })
      },
    })
    const harness = await harnessWith({ plugins: [disposer, vetoing('s1')] })
    expect(thrownBy(() => harness.sessions.create({ id: 's1' }))).toMatchObject({ code: 'CREATE_VETOED' })
    await disposing
    await eventually(() => seen.length > 0, 'session/disposed')
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(seen).toEqual(['s1 vetoed=true'])
  })
})

describe('persistence and a vetoed session', () => {
  test('a vetoed resume releases the lease it prepared: the lock goes, and another harness resumes', async () => {
    await storeOneTurn('s1')
    const vetoed = await harnessWith({ model: scriptedModel([]), plugins: [vetoing('s1')] })
    const rejection = await rejectionOf(vetoed.resumeAgent('s1'))
    expect(rejection).toMatchObject({ code: 'CREATE_VETOED', sessionId: 's1' })
    await eventually(() => !existsSync(join(dir, 's1.lock')), 's1.lock is removed')
    const other = await harnessWith({ model: scriptedModel([text('again')]) })
    const resumed = await other.resumeAgent('s1')
    expect((await resumed.run('more')).turn).toBe(2)
  })

  test('a vetoed seeded session is not written, and its id stays free in storage', async () => {
    const vetoed = await harnessWith({ plugins: [vetoing('s3')] })
    const veto = thrownBy(() => vetoed.sessions.create({ id: 's3', seed: logOf([TS(1), TE(1, 'completed')]) }))
    expect(veto).toMatchObject({ code: 'CREATE_VETOED', sessionId: 's3' })
    await vetoed.close()
    expect(await readdir(dir)).toEqual([])
    const fresh = await harnessWith({ model: scriptedModel([text('first')]) })
    const agent = await fresh.createAgent({ sessionId: 's3' })
    expect((await agent.run('hi')).turn).toBe(1)
  })

  test('the same harness can create the vetoed id again at once, when the veto is lifted', async () => {
    let veto = true
    const once = definePlugin({
      name: 'once',
      apply(ctx) {
        ctx.on('session/created', () => {
          if (veto) throw new Error('not yet')
        })
      },
    })
    const harness = await harnessWith({ model: scriptedModel([text('ok')]), plugins: [once] })
    expect(await rejectionOf(harness.createAgent({ sessionId: 's4' }))).toMatchObject({ code: 'CREATE_VETOED' })
    veto = false
    // At once: the new lease waits for the vetoed session's to be released.
    const agent = await harness.createAgent({ sessionId: 's4' })
    expect((await agent.run('hi')).reason.kind).toBe('completed')
  })

  test('close() right after a veto waits for the lease: no lock and no temporary file is left', async () => {
    const harness = await harnessWith({ plugins: [vetoing('s5')] })
    expect(
      thrownBy(() => harness.sessions.create({ id: 's5', seed: logOf([TS(1), TE(1, 'completed')]) })),
    ).toMatchObject({ code: 'CREATE_VETOED' })
    await harness.close()
    expect(await readdir(dir)).toEqual([])
  })
})
