import { z } from "zod";
import { AppError, ERROR_CODES, type ErrorCode } from "../lib/errors";

export const JSON_CONTENT_TYPE = "application/json; charset=utf-8";

export const json = (body: unknown, status = 200, headers: HeadersInit = {}): Response => {
  const h = new Headers(headers);
  h.set("Content-Type", JSON_CONTENT_TYPE);
  return new Response(JSON.stringify(body), { status, headers: h });
};

export const ErrorDetailSchema = z
  .object({
    path: z.string().max(200).meta({ example: "expectedSeat" }),
    message: z.string().max(500).meta({ example: "current value is false" }),
  })
  .meta({ id: "ErrorDetail", description: "One problem with one field or parameter." });

/**
 * How an interface shapes its error bodies. Each interface names its envelope; nothing asks which
 * interface a path belongs to.
 */
export interface Envelope {
  name: "analytics" | "coded";
  /** The body a client sees. */
  render(error: AppError, correlationId: string): unknown;
  /** The body schema for the given codes of one status (for the documents and the response checks). */
  schema(codes: readonly ErrorCode[]): z.ZodType;
  /** Codes this interface does not answer, as the one it answers instead (the analytics table has no 503). */
  translate(error: AppError): AppError;
}

/** `{"error": "<sentence>", "details": [...]}`: details for 400 (one per parameter) and 429 (empty). */
export const analyticsEnvelope: Envelope = {
  name: "analytics",
  render: (e) =>
    e.details.length > 0 || e.status === 400 || e.status === 429
      ? { error: e.message, details: e.details }
      : { error: e.message },
  // 400 and 429 always carry details (an empty list for 429); other statuses never do.
  schema: (codes) =>
    codes.some((c) => ERROR_CODES[c].status === 400 || ERROR_CODES[c].status === 429)
      ? AnalyticsErrorWithDetails
      : AnalyticsErrorBody,
  // The analytics error table has no 503: a store that failed is its 500, with one message.
  translate: (e) =>
    e.code === "unavailable"
      ? new AppError("internal_error", "API key verification, access checks or analytics processing failed. Retry the request.", {
          headers: e.headers,
        })
      : e,
};

const analyticsMessage = z
  .string()
  .max(500)
  .meta({ description: "What went wrong, as a sentence.", example: "Invalid query parameters." });

const AnalyticsErrorBody = z.object({ error: analyticsMessage }).meta({ id: "AnalyticsError" });

const AnalyticsErrorWithDetails = z
  .object({
    error: analyticsMessage,
    details: z
      .array(ErrorDetailSchema)
      .max(20)
      .meta({ description: "For 400: one entry per offending parameter; for 429: empty." }),
  })
  .meta({ id: "AnalyticsErrorWithDetails" });

/**
 * `{"error": {code, message, retriable, correlationId, details}}`; `details` always present. The
 * contract calls it "the members envelope"; it is the envelope of every interface but the
 * analytics export (members, operations, control plane, webhooks), named for what it holds.
 */
export const codedErrorEnvelope: Envelope = {
  name: "coded",
  render: (e, correlationId) => ({
    error: { code: e.code, message: e.message, retriable: e.retriable, correlationId, details: e.details },
  }),
  schema: (codes) => {
    const [first, ...rest] = codes;
    if (first === undefined) throw new Error("an error response needs at least one code");
    // One status may group codes that differ in it (409: a guard mismatch never, a running sync later).
    const flags = new Set(codes.map((c) => ERROR_CODES[c].retriable));
    const retriable = flags.size === 1 ? z.literal(ERROR_CODES[first].retriable) : z.boolean();
    return z.object({
      error: z.object({
        code: z.enum([first, ...rest]).meta({ description: codes.map((c) => `${c}: ${ERROR_CODES[c].when}.`).join(" ") }),
        message: z.string().max(500).meta({ description: "What went wrong, as a sentence." }),
        retriable: retriable.meta({ description: "Whether the same request may succeed later." }),
        correlationId: z
          .string()
          .regex(/^[A-Za-z0-9._:-]{1,128}$/)
          .max(128)
          .meta({ description: "The X-Correlation-Id of this response." }),
        details: z.array(ErrorDetailSchema).max(20),
      }),
    });
  },
  translate: (e) => e,
};
