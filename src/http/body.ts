import { AppError, badRequest } from "../lib/errors";

/** A client that has not sent its whole body by then is not waited for any longer. */
export const BODY_READ_DEADLINE_MS = 10_000;

/**
 * Reads a JSON object body: 415 unless `application/json` (parameters such as charset are fine),
 * 413 past `maxBytes` (checked while streaming, so a lying Content-Length cannot get past it),
 * 400 unless the body is a JSON object. A body that breaks off (the client disconnected) or does
 * not arrive within the deadline is the client's failure, a 400, never a logged 500.
 */
export async function readJsonObject(
  request: Request,
  maxBytes: number,
  deadlineMs = BODY_READ_DEADLINE_MS,
): Promise<Record<string, unknown>> {
  return parseJsonObject(await readJsonBytes(request, maxBytes, { deadlineMs }));
}

export interface ReadOptions {
  deadlineMs?: number;
  /** Sees every chunk as it arrives (e.g. to compute a signature while streaming). */
  onChunk?: (chunk: Uint8Array) => void;
}

/**
 * The raw bytes of an `application/json` body (415 otherwise, 413 past `maxBytes`), for a caller
 * that must see them exactly as sent (a signature over the body) before parsing them.
 */
export async function readJsonBytes(request: Request, maxBytes: number, options: ReadOptions = {}): Promise<Uint8Array> {
  const mediaType = (request.headers.get("Content-Type") ?? "").split(";")[0]?.trim().toLowerCase();
  if (mediaType !== "application/json") {
    throw new AppError("unsupported_media_type", "Content-Type must be application/json.");
  }
  const declared = Number(request.headers.get("Content-Length"));
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);
  if (!request.body) return new Uint8Array(0);
  const expected = Number.isInteger(declared) && declared > 0 ? declared : null;
  return readAll(request.body, maxBytes, expected, options);
}

/** 400 unless the bytes are UTF-8 text of a JSON object (or, with `arrays`, of an array: a JSON-RPC batch). */
export function parseJsonObject(bytes: Uint8Array): Record<string, unknown>;
export function parseJsonObject(bytes: Uint8Array, options: { arrays: true }): Record<string, unknown> | unknown[];
export function parseJsonObject(bytes: Uint8Array, options?: { arrays: true }): Record<string, unknown> | unknown[] {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw badRequest("The request body is not valid UTF-8.");
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw badRequest("The request body is not valid JSON.");
  }
  if (options?.arrays && Array.isArray(parsed)) return parsed;
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw badRequest("The request body must be a JSON object.");
  }
  return parsed as Record<string, unknown>;
}

export const tooLarge = (maxBytes: number) =>
  new AppError("payload_too_large", `The request body must not exceed ${maxBytes} bytes.`);

/** Without a Content-Length the buffer starts here and doubles. */
const INITIAL_BUFFER = 64 * 1024;

/**
 * Reads into one buffer: sized by Content-Length when the client declared one (GitHub does), else
 * grown by doubling. Never a list of chunks copied together at the end, which held twice the body.
 */
async function readAll(
  body: ReadableStream<Uint8Array>,
  maxBytes: number,
  declared: number | null,
  { deadlineMs = BODY_READ_DEADLINE_MS, onChunk }: ReadOptions,
): Promise<Uint8Array> {
  const reader = body.getReader();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(badRequest(`The request body did not arrive completely within ${deadlineMs / 1000} seconds.`)),
      deadlineMs,
    );
  });
  let buffer = new Uint8Array(declared ?? Math.min(INITIAL_BUFFER, maxBytes));
  let size = 0;
  try {
    for (;;) {
      let step: ReadableStreamReadResult<Uint8Array>;
      try {
        step = await Promise.race([reader.read(), deadline]);
      } catch (error) {
        if (error instanceof AppError) throw error;
        throw badRequest("The request body could not be read completely: the client closed the connection.");
      }
      if (step.done) break;
      const chunk = step.value;
      if (size + chunk.byteLength > maxBytes) throw tooLarge(maxBytes);
      if (size + chunk.byteLength > buffer.byteLength) {
        const grown = new Uint8Array(Math.min(maxBytes, Math.max(buffer.byteLength * 2, size + chunk.byteLength)));
        grown.set(buffer.subarray(0, size));
        buffer = grown;
      }
      buffer.set(chunk, size);
      size += chunk.byteLength;
      onChunk?.(chunk);
    }
  } catch (error) {
    reader.cancel().catch(() => {});
    throw error;
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
  return size === buffer.byteLength ? buffer : buffer.subarray(0, size);
}
