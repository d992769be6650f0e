/**
 * Loaded with `--import` into every case's child: counts `fsync` and `fdatasync` calls, whoever makes
 * them (Yoke's JSONL adapter goes through `FileHandle.sync` / `datasync`; the callback and sync forms
 * of `node:fs` are counted too). The counts are read from {@link syncCounts}.
 */
import fs from 'node:fs'
import { open } from 'node:fs/promises'

/** The counts so far in this process. */
export interface SyncCounts {
  fsync: number
  fdatasync: number
}

const counts: SyncCounts = { fsync: 0, fdatasync: 0 }
const key = Symbol.for('yoke.bench.syncCounts')
;(globalThis as Record<symbol, unknown>)[key] = counts

/** The counts of this process (zero when the preload did not run). */
export function syncCounts(): SyncCounts {
  return ((globalThis as Record<symbol, unknown>)[key] as SyncCounts | undefined) ?? { fsync: 0, fdatasync: 0 }
}

type Method = (...args: never[]) => unknown

function wrap(target: object, name: string, kind: keyof SyncCounts): void {
  const original = Reflect.get(target, name) as Method | undefined
  if (typeof original !== 'function') return
  Reflect.set(target, name, function (this: unknown, ...args: never[]) {
    counts[kind]++
    return original.apply(this, args)
  })
}

// FileHandle is not exported by name: its prototype is reached through a handle.
const handle = await open(process.execPath, 'r')
const fileHandlePrototype = Object.getPrototypeOf(handle) as object
await handle.close()
wrap(fileHandlePrototype, 'sync', 'fsync')
wrap(fileHandlePrototype, 'datasync', 'fdatasync')
wrap(fs, 'fsync', 'fsync')
wrap(fs, 'fsyncSync', 'fsync')
wrap(fs, 'fdatasync', 'fdatasync')
wrap(fs, 'fdatasyncSync', 'fdatasync')
