import { describe, expect, it } from "vitest";
import { CSV_HEADER, csvField, neutralizeFormula, toCsv } from "../../src/analytics/csv";
import { decodeCursor, encodeCursor } from "../../src/analytics/cursor";
import { chooseFormat } from "../../src/analytics/format";
import { formatInstant, MAX_INSTANT_MS, parseDateOnly, parseTimestamp } from "../../src/lib/time";
import {
  AuditLogQuery,
  encodeAuditCursor,
  encodeMemberCursor,
  encodeOrgCursor,
  MemberListQuery,
  OrganizationListQuery,
} from "../../src/members/query";
import type { AnalyticsPrRow } from "../../src/schemas/analytics";

/**
 * Parsers and formatters that need no bindings: instants, cursors, CSV and the format choice. The
 * HTTP tests check that each is wired in (one case each); the edge cases live here.
 */

describe("parseTimestamp: RFC 3339 with Z or ±HH:MM, kept to the millisecond, 1970 to 9999", () => {
  it.each([
    ["2026-11-02T09:30:00Z", Date.UTC(2026, 10, 2, 9, 30)],
    ["2026-11-02t09:30:00z", Date.UTC(2026, 10, 2, 9, 30)],
    ["2026-11-02T09:30:00.5Z", Date.UTC(2026, 10, 2, 9, 30, 0, 500)],
    ["2026-11-02T09:30:00.123456789Z", Date.UTC(2026, 10, 2, 9, 30, 0, 123)],
    ["2026-11-02T11:30:00+02:00", Date.UTC(2026, 10, 2, 9, 30)],
    ["2026-11-02T00:30:00-09:00", Date.UTC(2026, 10, 2, 9, 30)],
    ["2024-02-29T00:00:00Z", Date.UTC(2024, 1, 29)],
    ["1970-01-01T00:00:00Z", 0],
    ["9999-12-31T23:59:59.999Z", MAX_INSTANT_MS],
    ["9999-12-31T23:59:59.999+00:00", MAX_INSTANT_MS],
  ])("%s → %d", (input, ms) => {
    expect(parseTimestamp(input)).toEqual({ kind: "ok", ms });
  });

  it.each([
    ["2026-11-02T09:30:00", "timestamp must carry a time zone (Z or ±HH:MM)"],
    ["2026-11-02 09:30", "timestamp must carry a time zone (Z or ±HH:MM)"],
    [
      "2026-11-02",
      "must be a timestamp with a time and Z or ±HH:MM, like 2026-11-02T00:00:00Z; a date alone is not accepted here",
    ],
    ["yesterday", "must be an ISO 8601 timestamp with Z or ±HH:MM, like 2026-11-02T09:30:00Z"],
    ["10000-01-01T00:00:00Z", "must be an ISO 8601 timestamp with Z or ±HH:MM, like 2026-11-02T09:30:00Z"],
    ["2023-02-29T00:00:00Z", "is not a valid calendar date and time"],
    ["2026-11-02T24:00:00Z", "is not a valid calendar date and time"],
    ["2026-11-02T09:60:00Z", "is not a valid calendar date and time"],
    ["2026-11-02T09:30:00+24:00", "has an invalid UTC offset"],
    ["1970-01-01T00:00:00+00:01", "must not be before 1970-01-01T00:00:00Z"],
    ["9999-12-31T23:59:59.999-00:01", "must not be after 9999-12-31T23:59:59.999Z"],
  ])("%s is refused: %s", (input, reason) => {
    expect(parseTimestamp(input)).toEqual({ kind: "invalid", reason });
  });

  it("the analytics window words its refusals its own way", () => {
    expect(parseTimestamp("2026-11-02", "timestamp or date")).toEqual({
      kind: "invalid",
      reason: "must be an ISO 8601 timestamp or a YYYY-MM-DD date",
    });
    expect(parseTimestamp("9999-12-31T23:59:59.999-00:01", "timestamp or date")).toEqual({
      kind: "invalid",
      reason: "is too far in the future",
    });
  });
});

describe("parseDateOnly: a UTC day, its first or last millisecond", () => {
  it.each([
    ["2026-11-02", "start", { kind: "ok", ms: Date.UTC(2026, 10, 2) }],
    ["2026-11-02", "end", { kind: "ok", ms: Date.UTC(2026, 10, 3) - 1 }],
    ["2026-02-30", "start", { kind: "invalid", reason: "is not a valid calendar date" }],
    ["2026-11-02T00:00:00Z", "start", null],
    ["26-11-02", "end", null],
  ] as const)("%s (%s) → %j", (input, edge, expected) => {
    expect(parseDateOnly(input, edge)).toEqual(expected);
  });

  it("formatInstant writes UTC with milliseconds", () => {
    expect(formatInstant(Date.UTC(2026, 10, 2, 9, 30))).toBe("2026-11-02T09:30:00.000Z");
  });
});

describe("the analytics cursor: <mergedAt>|<id>", () => {
  it("round-trips", () => {
    const cursor = { mergedAt: Date.UTC(2026, 10, 20, 16, 44, 17, 54), id: 137 };
    expect(encodeCursor(cursor)).toBe("2026-11-20T16:44:17.054Z|137");
    expect(decodeCursor(encodeCursor(cursor))).toEqual(cursor);
  });

  it.each([
    "",
    "2026-11-20T16:44:17.054Z",
    "2026-11-20T16:44:17.054Z|",
    "2026-11-20T16:44:17.054Z|0",
    "2026-11-20T16:44:17.054Z|012",
    "2026-11-20T16:44:17.054Z|-1",
    "2026-11-20T16:44:17.054Z|1.5",
    "2026-11-20T16:44:17.054Z|99999999999999999",
    "2026-11-20T16:44:17.054Z|1|2",
    "2026-11-20|1",
    "2026-13-20T16:44:17.054Z|1",
    "abc",
  ])("%j is not a cursor", (value) => {
    expect(decodeCursor(value)).toBeNull();
  });
});

describe("the list cursors: base64url of a tagged position, canonical spelling only", () => {
  const parsed = (schema: typeof OrganizationListQuery | typeof MemberListQuery | typeof AuditLogQuery, cursor: string) => {
    const result = schema.safeParse({ cursor });
    return result.success ? result.data.cursor : result.error.issues.map((i) => i.message);
  };

  it("each round-trips through its query schema", () => {
    expect(parsed(OrganizationListQuery, encodeOrgCursor({ loginKey: "acme", orgKey: "acme" }))).toEqual({
      loginKey: "acme",
      orgKey: "acme",
    });
    expect(parsed(OrganizationListQuery, encodeOrgCursor({ loginKey: "new", orgKey: "old" }))).toEqual({
      loginKey: "new",
      orgKey: "old",
    });
    expect(parsed(MemberListQuery, encodeMemberCursor({ loginKey: "ada lovelace:1", githubUserId: "42" }))).toEqual({
      loginKey: "ada lovelace:1",
      githubUserId: "42",
    });
    expect(parsed(AuditLogQuery, encodeAuditCursor(9007199254740991, {}))).toEqual({
      before: 9007199254740991,
      filters: ",,,,,",
    });
    expect(parsed(AuditLogQuery, encodeAuditCursor(7, { action: "member.added", actor: "42", since: 0 }))).toEqual({
      before: 7,
      filters: ",member.added,,42,0,",
    });
  });

  const refused = ["is not a cursor this API issued"];
  it.each([
    ["another list's cursor", OrganizationListQuery, encodeAuditCursor(5, {})],
    ["another list's cursor", AuditLogQuery, encodeOrgCursor({ loginKey: "a", orgKey: "a" })],
    ["another list's cursor", MemberListQuery, encodeOrgCursor({ loginKey: "a", orgKey: "a" })],
    ["not base64url", OrganizationListQuery, "abc+"],
    ["padding (not the canonical spelling)", AuditLogQuery, `${encodeAuditCursor(5, {})}=`],
    ["an impossible length", OrganizationListQuery, "abcde"],
    ["an empty position", OrganizationListQuery, "bzo"],
    ["audit id 0", AuditLogQuery, encodeAuditCursor(0, {})],
    ["audit id past the safe integers", AuditLogQuery, encodeAuditCursor(2 ** 53, {})],
    ["a member id of 21 digits", MemberListQuery, encodeMemberCursor({ loginKey: "a", githubUserId: "1".repeat(21) })],
  ] as const)("%s is refused", (_what, schema, cursor) => {
    expect(parsed(schema, cursor)).toEqual(refused);
  });

  it("length is checked before decoding", () => {
    expect(parsed(OrganizationListQuery, "A".repeat(256))).toEqual(["must be at most 255 characters"]);
  });
});

describe("CSV (RFC 4180) with spreadsheet formulas neutralized", () => {
  it.each([
    ["=SUM(A1)", "'=SUM(A1)"],
    ["+1", "'+1"],
    ["-1", "'-1"],
    ["@cmd", "'@cmd"],
    ["\tx", "'\tx"],
    ["\rx", "'\rx"],
    ["alice", "alice"],
    ["a=b", "a=b"],
  ])("neutralizeFormula(%j) → %j", (text, expected) => {
    expect(neutralizeFormula(text)).toBe(expected);
  });

  it.each([
    ["plain", "plain"],
    ["a,b", '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ["two\nlines", '"two\nlines"'],
    ["cr\r", '"cr\r"'],
    ["", ""],
  ])("csvField(%j) → %j", (value, expected) => {
    expect(csvField(value)).toBe(expected);
  });

  it("toCsv: the header, then one CRLF-ended record per row; null is empty; numbers are not neutralized", () => {
    const row: AnalyticsPrRow = {
      org: "acme",
      repo: "=api",
      prNumber: 7,
      author: "o'neil, jr",
      createdAt: "2026-10-01T10:00:00.000Z",
      mergedAt: "2026-10-02T10:00:00.000Z",
      linesAdded: 12,
      linesDeleted: 3,
      numberOfServiceIssuesFlagged: 0,
      numberOfServiceIssuesFixed: 0,
      serviceFirstReviewedAt: "2026-10-01T12:00:00.000Z",
      totalAiLinesAuthored: null,
    };
    expect(toCsv([])).toBe(`${CSV_HEADER}\r\n`);
    expect(toCsv([row])).toBe(
      `${CSV_HEADER}\r\nacme,'=api,7,"o'neil, jr",2026-10-01T10:00:00.000Z,2026-10-02T10:00:00.000Z,12,3,0,0,2026-10-01T12:00:00.000Z,\r\n`,
    );
  });
});

describe("format: ?format wins; else Accept picks CSV only when it names text/csv above JSON", () => {
  it("chooseFormat: the same rule as a plain function", () => {
    expect(chooseFormat(undefined, null)).toBe("json");
    expect(chooseFormat(undefined, "text/csv;q=0.9, application/*;q=0.8")).toBe("csv");
    expect(chooseFormat(undefined, "text/csv;q=0.8, application/*;q=0.9")).toBe("json");
    expect(chooseFormat(undefined, "application/json;q=0, text/csv;q=0.1")).toBe("csv");
    // A malformed q-value is no preference at all (RFC 9110 qvalue: 0 to 1, three decimals at most).
    expect(chooseFormat(undefined, "text/csv;q=banana")).toBe("json");
    expect(chooseFormat(undefined, "text/csv;q=1.5")).toBe("json");
    expect(chooseFormat(undefined, "text/csv;q=0.500")).toBe("csv");
    expect(chooseFormat("json", "text/csv")).toBe("json");
  });
});
