import type { Logger } from 'yoke'

/** One call a {@link RecordingLogger} received. */
export interface LogRecord {
  readonly level: 'debug' | 'info' | 'warn' | 'error'
  readonly message: string
  readonly fields: Readonly<Record<string, unknown>> | undefined
}

/** A logger that records every call, for assertions. */
export interface RecordingLogger extends Logger {
  readonly records: LogRecord[]
  at(level: LogRecord['level']): LogRecord[]
}

export function recordingLogger(): RecordingLogger {
  const records: LogRecord[] = []
  const log =
    (level: LogRecord['level']) =>
    (message: string, fields?: Readonly<Record<string, unknown>>): void => {
      records.push({ level, message, fields })
    }
  return {
    records,
    at: (level) => records.filter((record) => record.level === level),
    debug: log('debug'),
    info: log('info'),
    warn: log('warn'),
    error: log('error'),
  }
}
