/**
 * Persistence: the adapter contract, the coordinator, write-behind, and the memory and JSONL
 * adapters.
 *
 * @module
 */
export { type JsonlPersistence, type JsonlPersistenceOptions, jsonlPersistence } from './jsonl/jsonl-persistence.js'
export {
  type BytesRead,
  type BytesWritten,
  type JsonlFileHandle,
  type JsonlFileSystem,
  nodeFileSystem,
} from './jsonl/jsonl-file-system.js'
export { DEFAULT_LEASE_HEARTBEAT_MS, DEFAULT_LEASE_TTL_MS, type LeaseOptions } from './lease-options.js'
export {
  createMemoryStore,
  type MemoryPersistence,
  type MemoryPersistenceOptions,
  type MemoryStore,
  memoryPersistence,
} from './memory-persistence.js'
export type {
  AppendBatchOptions,
  Lease,
  LoadOptions,
  PersistenceAdapter,
  ReadOptions,
  RepairCommit,
  StoredLease,
  StoredListing,
  StoredSuffix,
  StoredLog,
  TornTail,
} from './persistence-adapter.js'
export type {
  InspectedLog,
  LoadedLog,
  OperationOptions,
  PersistenceCoordinator,
  RepairReport,
  SessionPreparation,
} from './persistence-coordinator.js'
export type { Durability } from './durability.js'
export { type PersistenceEvents, persistenceEvents, type SessionWriteFailedPayload } from './persistence-events.js'
export { isPersistenceAdapter, type JsonlShorthand, type PersistenceEntryConfig } from './persistence-plugin.js'
export { type WriteBehindOptions, writeBehindOptionsSchema } from './write-behind.js'
