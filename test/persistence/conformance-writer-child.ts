/**
 * The writer child of the JSONL conformance target (`spawnWriter`): the conformance suite's
 * writer protocol over a JSONL directory.
 *
 * Arguments: a JSON `{ dir, compression }`.
 */
import { createHarness, jsonlPersistence } from 'yoke'
import { serveConformanceWriter } from 'yoke/testing'

const { dir, compression } = JSON.parse(process.argv[2] ?? '{}') as {
  dir: string
  compression: 'none' | 'gzip' | 'zstd'
}

let zstdEncoder: ((bytes: Uint8Array, level: number) => Uint8Array) | undefined
if (compression === 'zstd') {
  const wasmZstd = await import('@foxglove/wasm-zstd')
  await wasmZstd.isLoaded
  zstdEncoder = (bytes, level) => new Uint8Array(wasmZstd.compress(bytes, level))
}

await serveConformanceWriter({
  adapter: ({ lease }) =>
    jsonlPersistence({ dir, compression, lease, ...(zstdEncoder === undefined ? {} : { zstdEncoder }) }),
  createHarness,
})
