import { AppError, storageFailure } from "./errors";

interface DurableObjectFailure {
  retryable?: boolean;
  overloaded?: boolean;
}

const failure = (error: unknown): DurableObjectFailure =>
  typeof error === "object" && error !== null ? (error as DurableObjectFailure) : {};

/**
 * Calls a Durable Object; `call` must make a fresh stub each time it runs. Contract errors thrown inside the object
 * arrive as plain values (see `DurableResult`), so anything thrown here is an infrastructure failure:
 * `.overloaded` is answered 503 at once, `.retryable` gets one more try with a new stub (only for
 * calls that are safe to repeat), anything else is 503 too. Internals never reach the client.
 */
export async function callDurable<T>(call: () => Promise<T>, options: { idempotent: boolean }): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const f = failure(error);
    if (f.overloaded || !f.retryable || !options.idempotent) throw unavailable(error);
    try {
      return await call();
    } catch (retryError) {
      throw unavailable(retryError);
    }
  }
}

/** The cause goes to the logs with the correlation id (http/pipeline.ts), never to the client. */
const unavailable = (cause: unknown) => storageFailure("Durable Object", cause);

/**
 * What a Durable Object method returns: the value, or a contract error as data (an exception
 * crossing the RPC boundary loses its type, and a thrown error would be mistaken for a failure).
 */
export type DurableResult<T> =
  | { ok: true; value: T }
  | { ok: false; code: AppError["code"]; message: string; details?: { path: string; message: string }[] };

export const ok = <T>(value: T): DurableResult<T> => ({ ok: true, value });

/** Turns a DurableResult back into the value or the AppError it carries. */
export function unwrap<T>(result: DurableResult<T>): T {
  if (result.ok) return result.value;
  throw new AppError(result.code, result.message, { details: result.details ?? [] });
}
