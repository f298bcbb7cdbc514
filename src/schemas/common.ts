import { z } from "zod";
import { parseTimestamp } from "../lib/time";

/** GitHub organization or owner login, as it appears in paths and events. */
export const OrgLogin = z
  .string()
  .min(1, "must be 1 to 255 characters")
  .max(255, "must be 1 to 255 characters")
  .meta({ description: "GitHub organization or owner login (case-insensitive).", example: "acme" });

export const RepoName = z
  .string()
  .min(1, "must be 1 to 255 characters")
  .max(255, "must be 1 to 255 characters")
  .meta({ description: "Repository name under the owner.", example: "api" });

/**
 * Names on the control plane (paths and events) are GitHub's own (contract section 5, "Names"):
 * anything else is a 400 there. The public interfaces keep `OrgLogin`/`RepoName` above, where such
 * a name simply matches nothing.
 */
export const GithubOrgName = z
  .string()
  .regex(
    /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/,
    "must be a GitHub login: 1 to 39 letters, digits or hyphens, not starting with a hyphen",
  )
  .meta({ description: "GitHub organization login (case-insensitive).", example: "acme", override: { maxLength: 39 } });

export const GithubRepoName = z
  .string()
  .regex(
    /^(?!\.\.?$)[A-Za-z0-9._-]{1,100}$/,
    "must be a GitHub repository name: 1 to 100 letters, digits, '.', '-' or '_', and not '.' or '..'",
  )
  .meta({ description: "GitHub repository name (case-insensitive).", example: "api", override: { maxLength: 100 } });

export const GithubUserId = z
  .string()
  .regex(/^\d{1,20}$/, "must be a numeric GitHub user id of 1 to 20 digits")
  .meta({ description: "Numeric GitHub user id.", example: "583231", override: { maxLength: 20 } });

/**
 * A GitHub user id where the control plane or a webhook names a person: GitHub's ids have no
 * leading zero, so `01002` would be a second identity of `1002` (contract section 5). The public
 * routes keep `GithubUserId`, where such an id simply names no member.
 */
export const GithubId = z
  .string()
  .regex(/^[1-9]\d{0,19}$/, "must be a numeric GitHub user id of 1 to 20 digits without a leading zero")
  .meta({
    description: "Numeric GitHub user id, without a leading zero.",
    example: "583231",
    override: { maxLength: 20 },
  });

/** A user login as the service answers it. */
export const GithubLogin = z.string().min(1).max(255).meta({ example: "octocat" });

/**
 * A user login where the control plane or a webhook sets one: GitHub's ASCII set (letters, digits,
 * hyphens, at most 39, no leading hyphen), plus the `[bot]` suffix of GitHub's bot accounts. Only
 * ASCII, so that the member search's case folding (SQLite's `lower`, ASCII only) is exact.
 */
export const GithubUserLogin = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9-]{0,38}(?:\[bot\])?$/,
    "must be a GitHub login: 1 to 39 ASCII letters, digits or hyphens, not starting with a hyphen, optionally ending in [bot]",
  )
  .meta({ example: "octocat", override: { maxLength: 44 } });

/**
 * An e-mail address as JSON Schema's `email` format means it (the form ajv-formats checks): an
 * ASCII local part of dot-separated atoms (at most 64 characters), `@`, and a host name with at
 * least one dot (labels of at most 63 characters, at most 253 in all). The service answers every
 * stored address as `format: email`, so the control plane accepts nothing else.
 */
export const EmailAddress = z
  .string()
  .max(320)
  .refine((value) => {
    const match =
      /^([a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*)@((?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)$/i.exec(
        value,
      );
    const [, local = "", host = ""] = match ?? [];
    return match !== null && local.length <= 64 && host.length <= 253 && host.split(".").every((label) => label.length <= 63);
  }, "must be an e-mail address")
  .meta({ format: "email", example: "max@example.com" });

/** Every cursor of the section 8 lists: base64url without padding (their decoder refuses anything else). */
export const LIST_CURSOR = /^[A-Za-z0-9_-]+$/;

/** What every date-time input takes (`lib/time.ts`); a field with a description of its own repeats the range. */
export const INSTANT_RANGE =
  "RFC 3339 with Z or ±HH:MM (fraction kept to the millisecond), from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z.";

/** An RFC 3339 timestamp on input, epoch milliseconds inside the service; `example` for the documents. */
export const instantInput = (example: string) =>
  z
    .string()
    .max(64)
    .transform((value, ctx) => {
      const parsed = parseTimestamp(value);
      if (parsed.kind === "invalid") {
        ctx.addIssue({ code: "custom", message: parsed.reason });
        return z.NEVER;
      }
      return parsed.ms;
    })
    .meta({
      override: { type: "string", format: "date-time" },
      description: INSTANT_RANGE,
      example,
    });

export const InstantInput = instantInput("2026-11-02T09:30:00.000Z");

/** Response date-times: UTC, millisecond precision. */
export const InstantOutput = z.string().meta({
  format: "date-time",
  example: "2026-11-02T09:30:00.000Z",
  description: "UTC, YYYY-MM-DDTHH:mm:ss.sssZ",
  override: { maxLength: 24 },
});

export const Role = z.enum(["member", "admin", "viewer"]).meta({ id: "Role" });
export type Role = z.infer<typeof Role>;

/**
 * A page-size query parameter: decimal digits only (not 10.5, 1e1, -1 or 0x10), 1 to `max`, at most
 * 255 characters like every parameter; documented as the integer it stands for, with its default.
 */
export const PageSize = (max: number, fallback: number) =>
  z
    .string()
    .max(255, "must be at most 255 characters")
    .transform((value, ctx) => {
      const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
      if (n >= 1 && n <= max) return n;
      ctx.addIssue({ code: "custom", message: `must be an integer from 1 to ${max}` });
      return z.NEVER;
    })
    .optional()
    .meta({
      // Documented as the integer it stands for (the string's maxLength does not apply to that).
      override: ({ jsonSchema }) => {
        delete jsonSchema.maxLength;
        Object.assign(jsonSchema, {
          type: "integer",
          minimum: 1,
          maximum: max,
          default: fallback,
          description: "Page size (decimal digits).",
        });
      },
    });
