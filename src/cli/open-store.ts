/**
 * The storage a command opens from its flags: today the JSONL logs of `--dir`. Commands that work
 * on the adapter itself (`unlock`) open it here, so a new storage flag is one branch in one place.
 *
 * @module
 */
import { jsonlPersistence } from '../persistence/jsonl/jsonl-persistence.js'
import type { PersistenceAdapter } from '../persistence/persistence-adapter.js'

/** Where a command's sessions are stored, as its flags say. */
export interface StoreFlags {
  /** The JSONL log directory (`--dir`, default `./sessions`). */
  readonly dir: string
}

/**
 * Opens the adapter the flags name. Opening writes nothing; close it when done.
 *
 * @param flags - the storage flags
 * @returns the adapter
 */
export function openStore(flags: StoreFlags): PersistenceAdapter {
  return jsonlPersistence({ dir: flags.dir })
}
