/** A lossless JSON value: what session event data is made of. */
export type JsonValue = null | boolean | number | string | JsonArray | JsonObject

/** A JSON array. */
export type JsonArray = readonly JsonValue[]

/** A JSON object: plain or null-prototype, string keys only. */
export interface JsonObject {
  readonly [key: string]: JsonValue
}
