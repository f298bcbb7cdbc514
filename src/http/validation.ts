import type { z } from "zod";
import { badRequest, type ErrorDetail } from "../lib/errors";

const joinPath = (path: readonly PropertyKey[]): string => path.map(String).join(".");

/** Zod issues as contract `details`: one entry per offending field, unknown fields named one by one. */
export function issuesToDetails(issues: readonly z.core.$ZodIssue[], root = ""): ErrorDetail[] {
  const prefix = (path: readonly PropertyKey[]) => [root, joinPath(path)].filter((p) => p !== "").join(".");
  const details: ErrorDetail[] = [];
  for (const issue of issues) {
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) details.push({ path: prefix([...issue.path, key]), message: "is not a known field" });
    } else if (issue.code === "invalid_union" && issue.errors.length === 1 && issue.errors[0]) {
      details.push(...issuesToDetails(issue.errors[0], prefix(issue.path)));
    } else {
      details.push({ path: prefix(issue.path), message: issue.message });
    }
  }
  return details;
}

/** Validates `value` or throws a 400 `invalid_request` whose details name every problem. */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, message: string): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw badRequest(message, issuesToDetails(result.error.issues));
  return result.data;
}
