const secretKey = /key$|secret|token|password|authorization|credential/i

function isPlainObject(value: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

function describeValue(value: unknown, ancestors: object[]): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value
    case 'number':
      if (!Number.isFinite(value)) return `[number ${value}]`
      return Object.is(value, -0) ? 0 : value
    case 'bigint':
      return `${value}n`
    case 'symbol':
      return `[symbol ${value.description ?? ''}]`
    case 'function':
      return `[function ${value.name || 'anonymous'}]`
    case 'undefined':
      return undefined
  }
  if (value === null) return null
  const object = value as object
  if (ancestors.includes(object)) return '[circular]'
  if (object instanceof Date) return Number.isNaN(object.getTime()) ? '[invalid date]' : object.toISOString()
  ancestors.push(object)
  try {
    if (Array.isArray(object)) return object.map((item) => describeValue(item, ancestors) ?? null)
    if (!isPlainObject(object)) return `[instance ${object.constructor?.name || 'Object'}]`
    const result: Record<string, unknown> = {}
    for (const [key, item] of Object.entries(object)) {
      const described = secretKey.test(key) ? '[redacted]' : describeValue(item, ancestors)
      if (described !== undefined)
        Object.defineProperty(result, key, { value: described, enumerable: true, writable: true, configurable: true })
    }
    return result
  } finally {
    ancestors.pop()
  }
}

/**
 * A JSON-safe rendering of a config: functions, instances, dates, bigints,
 * symbols, cycles and non-finite numbers become strings; values under secret-looking keys are
 * `"[redacted]"`.
 *
 * @internal
 */
export function describeConfig(config: unknown): unknown {
  return describeValue(config, [])
}
