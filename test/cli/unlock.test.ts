/**
 * `yoke unlock` as a child process against real locks: one left by a SIGKILLed writer, one past its
 * TTL, one from another host, and one held by a live writer that only `--force` breaks (the writer
 * then learns LEASE_LOST and writes nothing more).
 */
import { readdir, readFile, writeFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { jsonlPersistence } from 'yoke'
import { type Bundle, bundle } from '../helpers/child-process.js'
import { type LineChild, startLineChild } from '../helpers/line-child.js'
import { fixtureId, snapshot, writeTwoTurns } from './cli-fixtures.js'
import { failed, jsonOf, useCli } from './cli-process.js'

const { yoke, freshDir } = useCli()
let holderChild: Bundle | undefined

beforeAll(async () => {
  holderChild = await bundle('test/persistence/lease-holder-child.ts')
}, 60_000)

afterAll(async () => {
  await holderChild?.remove()
})

/** Starts a writer holding the lease of `id` in `dir`, appending every 50 ms, once it appended. */
async function startHolder(dir: string, id: string, lease: { ttlMs: number; heartbeatMs: number } | {} = {}) {
  const child = startLineChild(holderChild!.file, JSON.stringify({ dir, id, ...lease }))
  await child.waitFor(() => child.lines.length >= 1, 'the first append')
  return child
}

function stop(child: LineChild): void {
  child.process.kill('SIGCONT')
  child.process.kill('SIGKILL')
}

const lockOf = async (dir: string, id: string): Promise<Record<string, unknown>> =>
  JSON.parse(await readFile(join(dir, `${id}.lock`), 'utf8')) as Record<string, unknown>

describe('yoke unlock', () => {
  test('no lease: says so and exits 0, writing nothing', async () => {
    const cwd = await freshDir()
    const d = join(cwd, 'd')
    await writeTwoTurns(d)
    const before = await snapshot(d)
    const [text, json] = await Promise.all([
      yoke(cwd, 'unlock', fixtureId, '--dir', 'd'),
      yoke(cwd, 'unlock', join('d', `${fixtureId}.jsonl`), '--json'),
    ])
    expect(text).toEqual({ code: 0, stdout: `unlock ${fixtureId}: no lease held, nothing to do\n`, stderr: '' })
    expect(json.code).toBe(0)
    expect(jsonOf(json)).toEqual({ id: fixtureId, action: 'none', lease: null })
    expect(await snapshot(d)).toEqual(before)
  })

  test('an unknown session exits 3, a bad id 2, and nothing is created', async () => {
    const cwd = await freshDir()
    const [unknown, path, bad, asJson] = await Promise.all([
      yoke(cwd, 'unlock', 'nobody', '--dir', 'd'),
      yoke(cwd, 'unlock', 'd/nobody.jsonl'),
      yoke(cwd, 'unlock', 'bad id!'),
      yoke(cwd, 'unlock', 'nobody', '--json'),
    ])
    failed(unknown, 3, 'SESSION_NOT_FOUND')
    expect(unknown.stderr).toContain('session "nobody"')
    failed(path, 3, 'SESSION_NOT_FOUND')
    failed(bad, 2, 'INVALID_SESSION_ID')
    expect(asJson.code).toBe(3)
    expect(JSON.parse(asJson.stderr)).toMatchObject({ error: { code: 'SESSION_NOT_FOUND' } })
    expect(await readdir(cwd)).toEqual([])
  })

  test('a lock left by a SIGKILLed writer is removed, naming its holder, without --force', async () => {
    const cwd = await freshDir()
    const d = join(cwd, 'd')
    const child = await startHolder(d, 'crashed')
    child.process.kill('SIGKILL')
    await child.exited
    const owner = child.lines[0]?.['owner'] as string
    const unlocked = await yoke(cwd, 'unlock', 'crashed', '--dir', 'd')
    expect(unlocked.stderr).toBe('')
    expect(unlocked.code).toBe(0)
    expect(unlocked.stdout).toMatch(
      new RegExp(
        `^unlock crashed: removed the lease of a process that is gone · owner ${owner} \\(epoch 1\\) · process ${child.process.pid} on ${hostname()} · last heartbeat \\d+ (ms|s) ago, TTL 30 s\\n$`,
      ),
    )
    expect(await readdir(d)).toEqual(['crashed.jsonl'])
    expect(jsonOf(await yoke(cwd, 'unlock', 'crashed', '--dir', 'd', '--json'))).toEqual({
      id: 'crashed',
      action: 'none',
      lease: null,
    })
    // Repair takes the session as usual afterwards.
    expect((await yoke(cwd, 'repair', 'crashed', '--dir', 'd')).code).toBe(0)
  }, 60_000)

  test('a lease past its TTL is removed: its age and TTL are shown (a SIGKILLed writer, a lock of another host)', async () => {
    const cwd = await freshDir()
    const d = join(cwd, 'd')
    const child = await startHolder(d, 'expired', { ttlMs: 300, heartbeatMs: 100 })
    child.process.kill('SIGKILL')
    await child.exited
    await new Promise((resolve) => setTimeout(resolve, 400))
    const json = await yoke(cwd, 'unlock', 'expired', '--dir', 'd', '--json')
    expect(json.code).toBe(0)
    const report = jsonOf(json)
    expect(report).toMatchObject({
      id: 'expired',
      action: 'removed',
      lease: {
        owner: child.lines[0]?.['owner'],
        epoch: 1,
        pid: child.process.pid,
        host: hostname(),
        ttlMs: 300,
        live: false,
      },
    })
    expect((report['lease'] as { ageMs: number }).ageMs).toBeGreaterThanOrEqual(300)

    // A container restarted elsewhere: another host, PID 1, two minutes without a heartbeat.
    expect(await readdir(d)).toEqual(['expired.jsonl'])
    const foreign = {
      owner: 'c'.repeat(32),
      epoch: 7,
      token: 'd'.repeat(32),
      pid: 1,
      host: 'web-1',
      acquiredAt: Date.now() - 600_000,
      heartbeatAt: Date.now() - 125_000,
      ttlMs: 30_000,
    }
    await writeFile(join(d, 'expired.lock'), JSON.stringify(foreign))
    const text = await yoke(cwd, 'unlock', 'expired', '--dir', 'd')
    expect(text).toEqual({
      code: 0,
      stdout: `unlock expired: removed an expired lease · owner ${'c'.repeat(32)} (epoch 7) · process 1 on web-1 · last heartbeat 2 min ago, TTL 30 s\n`,
      stderr: '',
    })
    expect(await readdir(d)).toEqual(['expired.jsonl'])
  }, 60_000)

  test('a live writer: repair and unlock exit 6 naming it; --force breaks it, and it writes nothing more', async () => {
    const cwd = await freshDir()
    const d = join(cwd, 'd')
    const child = await startHolder(d, 'busy')
    try {
      const owner = child.lines[0]?.['owner'] as string
      const [repair, refused, refusedJson] = await Promise.all([
        yoke(cwd, 'repair', 'busy', '--dir', 'd'),
        yoke(cwd, 'unlock', 'busy', '--dir', 'd'),
        yoke(cwd, 'unlock', 'busy', '--dir', 'd', '--json'),
      ])
      failed(repair, 6, 'SESSION_LOCKED')
      expect(repair.stderr).toContain('"yoke unlock busy" shows its holder and removes the lease once it expired')
      failed(refused, 6, 'SESSION_LOCKED')
      expect(refused.stderr).toMatch(
        new RegExp(
          `^yoke: SESSION_LOCKED: session "busy": the lease is live: owner ${owner} \\(epoch 1\\) · process ${child.process.pid} on ${hostname()} · last heartbeat \\d+ (ms|s) ago, TTL 30 s; if that process no longer writes the session, "yoke unlock busy --force" breaks it\\n$`,
        ),
      )
      expect(refusedJson.code).toBe(6)
      expect(JSON.parse(refusedJson.stderr)).toMatchObject({ error: { code: 'SESSION_LOCKED' } })
      expect(await lockOf(d, 'busy')).toMatchObject({ owner, epoch: 1 })
      expect(child.lines.some((line) => 'error' in line)).toBe(false)

      // Stopped right after an append, so none of its appends is between its lock check and its write.
      const appends = child.lines.length
      await child.waitFor(() => child.lines.length > appends, 'one more append')
      child.process.kill('SIGSTOP')
      const acked = child.lines.length
      const forced = await yoke(cwd, 'unlock', 'busy', '--dir', 'd', '--force', '--json')
      expect(forced.code).toBe(0)
      expect(jsonOf(forced)).toMatchObject({
        id: 'busy',
        action: 'broken',
        lease: { owner, epoch: 1, pid: child.process.pid, host: hostname(), ttlMs: 30_000, live: true },
      })
      child.process.kill('SIGCONT')
      await child.waitFor(() => child.lines.some((line) => 'error' in line), "the writer's error")
      expect(await child.exited).toBe(0)
      expect(child.lines.slice(acked).filter((line) => 'appended' in line)).toEqual([])
      expect(child.lines.at(-1)).toMatchObject({ error: 'LEASE_LOST', lost: true, signalAborted: true })

      expect(jsonOf(await yoke(cwd, 'unlock', 'busy', '--dir', 'd', '--json'))).toMatchObject({ action: 'none' })
      const next = jsonlPersistence({ dir: d })
      try {
        expect((await next.load('busy')).events).toHaveLength(child.lines[acked - 1]?.['appended'] as number)
        // The next holder gets the next epoch.
        expect((await next.acquire('busy')).epoch).toBe(2)
      } finally {
        await next.close()
      }
    } finally {
      stop(child)
    }
  }, 60_000)

  test('--force on a live writer prints what it broke; an unreadable lock needs --force', async () => {
    const cwd = await freshDir()
    const d = join(cwd, 'd')
    const child = await startHolder(d, 'busy')
    try {
      const forced = await yoke(cwd, 'unlock', 'busy', '--dir', 'd', '--force')
      expect(forced.stderr).toBe('')
      expect(forced.stdout).toMatch(
        new RegExp(
          `^unlock busy: broke a live lease · owner ${child.lines[0]?.['owner']} \\(epoch 1\\) · process ${child.process.pid} on ${hostname()} · last heartbeat \\d+ (ms|s) ago, TTL 30 s; its holder writes nothing more \\(LEASE_LOST\\)\\n$`,
        ),
      )
      await child.waitFor(() => child.lines.some((line) => 'error' in line), "the writer's error")
    } finally {
      stop(child)
    }
    await writeFile(join(d, 'busy.lock'), 'garbage')
    const refused = await yoke(cwd, 'unlock', 'busy', '--dir', 'd')
    failed(refused, 6, 'SESSION_LOCKED')
    expect(refused.stderr).toContain('unreadable')
    expect(refused.stderr).toContain('yoke unlock --force')
    const forced = await yoke(cwd, 'unlock', 'busy', '--dir', 'd', '--force')
    expect(forced).toEqual({
      code: 0,
      stdout: 'unlock busy: broke an unreadable lock (no holder to show)\n',
      stderr: '',
    })
    expect(jsonOf(await yoke(cwd, 'unlock', 'busy', '--dir', 'd', '--json'))).toMatchObject({ action: 'none' })
  }, 60_000)

  test('--help', async () => {
    const help = await yoke(await freshDir(), 'unlock', '--help')
    expect(help.code).toBe(0)
    expect(
      help.stdout.startsWith(
        'Usage: yoke unlock <session> [--dir <path> | --sqlite <file> | --postgres <url> [--schema <name>]] [--json] [--force]\n',
      ),
    ).toBe(true)
    for (const flag of ['--force', '--sqlite <file>', '--postgres <url>', '--schema <name>'])
      expect(help.stdout).toContain(flag)
  })
})
