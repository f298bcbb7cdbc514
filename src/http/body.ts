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
  return parseJsonObject(await readJsonBytes(request, maxBytes, deadlineMs));
}

/**
 * The raw bytes of an `application/json` body (415 otherwise, 413 past `maxBytes`), for a caller
 * that must see them exactly as sent (a signature over the body) before parsing them.
 */
export async function readJsonBytes(request: Request, maxBytes: number, deadlineMs = BODY_READ_DEADLINE_MS): Promise<Uint8Array> {
  const mediaType = (request.headers.get("Content-Type") ?? "").split(";")[0]?.trim().toLowerCase();
  if (mediaType !== "application/json") {
    throw new AppError("unsupported_media_type", "Content-Type must be application/json.");
  }
  const declared = Number(request.headers.get("Content-Length"));
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);
  return request.body ? await readAll(request.body, maxBytes, deadlineMs) : new Uint8Array(0);
}

/** 400 unless the bytes are UTF-8 text of a JSON object. */
export function parseJsonObject(bytes: Uint8Array): Record<string, unknown> {
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
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw badRequest("The request body must be a JSON object.");
  }
  return parsed as Record<string, unknown>;
}

const tooLarge = (maxBytes: number) => new AppError("payload_too_large", `The request body must not exceed ${maxBytes} bytes.`);

async function readAll(body: ReadableStream<Uint8Array>, maxBytes: number, deadlineMs: number): Promise<Uint8Array> {
  const reader = body.getReader();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(badRequest(`The request body did not arrive completely within ${deadlineMs / 1000} seconds.`)),
      deadlineMs,
    );
  });
  const chunks: Uint8Array[] = [];
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
      size += step.value.byteLength;
      if (size > maxBytes) throw tooLarge(maxBytes);
      chunks.push(step.value);
    }
  } catch (error) {
    reader.cancel().catch(() => {});
    throw error;
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
