/**
 * What a connection string may show in messages: the server, the database and the user, never the
 * password.
 *
 * @module
 */

/**
 * The server a connection string names, for messages: `user@host:port/database`, without the
 * password.
 *
 * @param connectionString - a `postgresql://` URL or libpq `key=value` pairs
 * @returns the description
 * @internal
 */
export function describeTarget(connectionString: string): string {
  const url = parseUrl(connectionString)
  if (url !== undefined) {
    const user = url.username === '' ? '' : `${decode(url.username)}@`
    const host = url.host === '' ? 'localhost' : url.host
    return `${user}${host}${url.pathname}`
  }
  const pairs = keyValues(connectionString)
  const host = pairs.get('host') ?? 'localhost'
  const port = pairs.get('port')
  const database = pairs.get('dbname')
  const user = pairs.get('user')
  return `${user === undefined ? '' : `${user}@`}${host}${port === undefined ? '' : `:${port}`}${database === undefined ? '' : `/${database}`}`
}

/**
 * The password in a connection string, in every spelling a driver message could echo it, so they
 * can be scrubbed.
 *
 * @param connectionString - the connection string, if any
 * @returns the password's spellings (empty when there is none)
 * @internal
 */
export function passwordOf(connectionString: string | undefined): readonly string[] {
  if (connectionString === undefined) return []
  const url = parseUrl(connectionString)
  const password = url === undefined ? keyValues(connectionString).get('password') : url.password
  if (password === undefined || password === '') return []
  return [...new Set([password, decode(password)])]
}

function parseUrl(connectionString: string): URL | undefined {
  if (!/^postgres(ql)?:\/\//i.test(connectionString)) return undefined
  try {
    return new URL(connectionString)
  } catch {
    return undefined
  }
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

/** libpq `key=value` pairs (values optionally in single quotes). */
function keyValues(connectionString: string): Map<string, string> {
  const pairs = new Map<string, string>()
  for (const match of connectionString.matchAll(/(\w+)\s*=\s*('(?:[^'\\]|\\.)*'|\S*)/g)) {
    const [, key, raw] = match
    if (key === undefined || raw === undefined) continue
    pairs.set(key, raw.startsWith("'") ? raw.slice(1, -1).replace(/\\(.)/g, '$1') : raw)
  }
  return pairs
}
