/**
 * The node file system of the JSONL adapter with every call counted by name, for the tests and
 * benches that count syncs and calls per append.
 */
import { type JsonlFileSystem, nodeFileSystem } from '../../src/persistence/jsonl/jsonl-file-system.js'

/** Calls made, by method name (`fdatasync`, `write`, `open`, …); a method never called is absent. */
export type FileSystemCalls = Record<string, number>

/**
 * The node file system with every call counted in `calls`.
 *
 * @param calls - the counters, incremented by method name
 * @returns the counting file system
 */
export function countingFileSystem(calls: FileSystemCalls): JsonlFileSystem {
  const counted: Record<string, unknown> = {}
  for (const [name, operation] of Object.entries(nodeFileSystem)) {
    counted[name] = (...args: unknown[]) => {
      calls[name] = (calls[name] ?? 0) + 1
      return (operation as (...values: unknown[]) => unknown)(...args)
    }
  }
  return counted as unknown as JsonlFileSystem
}

/**
 * The syncs among `calls`: `fsync` and `fdatasync`.
 *
 * @param calls - the counters of {@link countingFileSystem}
 * @returns how many syncs were made
 */
export function syncsOf(calls: FileSystemCalls): number {
  return (calls['fsync'] ?? 0) + (calls['fdatasync'] ?? 0)
}
