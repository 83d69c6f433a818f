/** Structured logs: one JSON object a line on stderr, so stdout stays free (the MCP server speaks on it). */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** FLAGOPS_LOG_LEVEL as every process reads it: absent or empty (as every setting) means info; anything but a level is refused. */
export function logLevelFrom(value: string | undefined): LogLevel | null {
  if (value === undefined || value === '') return 'info';
  return (LOG_LEVELS as readonly string[]).includes(value) ? (value as LogLevel) : null;
}

const LEVEL_ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

export interface LoggerOptions {
  level?: LogLevel;
  write?: (line: string) => void;
  base?: Record<string, unknown>;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const threshold = LEVEL_ORDER[options.level ?? 'info'];
  const write = options.write ?? ((line: string) => process.stderr.write(line));
  const base = options.base ?? {};
  const emit = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (LEVEL_ORDER[level] < threshold) return;
    const record: Record<string, unknown> = { time: new Date().toISOString(), level, msg, ...base, ...fields };
    if (record.err instanceof Error) record.err = { message: record.err.message, stack: record.err.stack };
    write(`${JSON.stringify(record)}\n`);
  };
  return {
    debug: (msg, fields) => emit('debug', msg, fields),
    info: (msg, fields) => emit('info', msg, fields),
    warn: (msg, fields) => emit('warn', msg, fields),
    error: (msg, fields) => emit('error', msg, fields),
    child: (fields) => createLogger({ ...options, base: { ...base, ...fields } }),
  };
}

/** A logger that drops everything: the default in tests. */
export const silentLogger: Logger = createLogger({ level: 'error', write: () => {} });
