/**
 * The one logger: a JSON line per event, `{"level", "event", "correlationId"?, ...fields}`, written
 * with the console method of its level (Workers Logs and `wrangler dev` read the level from it:
 * `error` → console.error, `warn` → console.warn, `info` → console.log). `level` stays the first
 * key: `npm start` hides the info lines of its demo load by it (`scripts/lib/dev-output.mjs`).
 *
 * `event` names what happened in a few stable words (search the logs by it); whatever varies goes
 * into the fields. A request's lines carry its correlation id: `logger({ correlationId })`.
 */
export type LogLevel = "info" | "warn" | "error";

/** Extra keys of a line; `undefined` values are left out, as JSON.stringify does. */
export type LogFields = Record<string, unknown>;

export interface Logger {
  info(event: string, fields?: LogFields): void;
  warn(event: string, fields?: LogFields): void;
  error(event: string, fields?: LogFields): void;
  /** A logger whose every line also carries `fields` (a correlation id, an installation). */
  with(fields: LogFields): Logger;
}

const write: Record<LogLevel, (line: string) => void> = {
  info: (line) => console.log(line),
  warn: (line) => console.warn(line),
  error: (line) => console.error(line),
};

/** The line of one event, as written; a field never overrides `level` or `event`. */
export function logLine(level: LogLevel, event: string, context: LogFields, fields: LogFields = {}): string {
  const line: LogFields = { level, event, ...context, ...fields };
  line.level = level;
  line.event = event;
  return JSON.stringify(line);
}

/** A logger whose lines carry `context` (for example `{ correlationId }`). */
export function logger(context: LogFields = {}): Logger {
  const at = (level: LogLevel) => (event: string, fields?: LogFields) => write[level](logLine(level, event, context, fields));
  return {
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    with: (more) => logger({ ...context, ...more }),
  };
}

/** The logger of lines outside a request (queue consumer, cron, Durable Object housekeeping). */
export const log: Logger = logger();

/**
 * An error as a log field: `Name: message` for an Error (and its cause's, when it has one: a
 * storage failure's message says only that the service is unavailable), its string otherwise.
 */
export const errorField = (error: unknown): string | undefined =>
  error instanceof Error
    ? `${error.name}: ${error.message}${error.cause instanceof Error ? ` (cause: ${error.cause.name}: ${error.cause.message})` : ""}`
    : error === undefined
      ? undefined
      : String(error);
