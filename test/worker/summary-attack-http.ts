import { expect } from "vitest";
import { SUMMARY_PLANS } from "../../src/analytics/summary";
import type { AnalyticsScope } from "../../src/storage/analytics";
import type { GroupingsFigures, GroupingsQuery } from "../../src/storage/analytics-summary";
import { addMember, adminOk, call, createKey, createOrg, createUser, unique } from "./helpers";
import { type ExportRow, exportRows, type GroupBy, referenceAnswer, referenceSummary } from "./summary-reference";

/**
 * The summary attacks' way over HTTP (`summary-group-months-attack`, `summary-corrections-attack`):
 * an organization with a signed-in member's analytics key, and a summary compared with the export's
 * rows for the same parameters, walked page by page and grouped (contract sections 12 and 21).
 */

export type Window = { start: number; end: number };

/** Groups in key order (a null key, an author never named, as the text "null"). */
const byKey = (a: { key: string }, b: { key: string }) =>
  String(a.key) < String(b.key) ? -1 : String(a.key) > String(b.key) ? 1 : 0;

/** The storage function's answer in the reference's shape: per grouping its groups (key order) and the totals. */
export const shapeOf = (figures: GroupingsFigures) =>
  figures.groupings.map(({ groups, totals }) => ({ groups: [...groups].sort(byKey), totals }));

/** The export's rows grouped as the storage function answers them: groups with rows only, key order. */
export function expectedGroupings(rows: ExportRow[], groupBys: readonly GroupBy[], w: Window) {
  return groupBys.map((g) => {
    const { groups, totals } = referenceSummary(rows, g, w.start, w.end);
    return { groups: groups.filter((x) => x.pullRequests > 0).sort(byKey), totals };
  });
}

/** The storage's scope of an admin's read of `org` over `w` (no list, no access list), with `extra`. */
export const scopeOf = (org: string, w: Window, extra: Partial<AnalyticsScope> = {}): AnalyticsScope => ({
  orgKey: org,
  repoKeys: null,
  authorKeys: null,
  accessibleRepoKeys: null,
  excludedRepoKeys: [],
  start: w.start,
  end: w.end,
  ...extra,
});

/** The storage's query for an admin's summary of `org` over `w`: no list, no access list. */
export const groupingsOf = (org: string, w: Window, groupBys: GroupBy[]): GroupingsQuery => ({
  orgKey: org,
  repoKeys: null,
  authorKeys: null,
  accessibleRepoKeys: null,
  start: w.start,
  end: w.end,
  groupBys,
});
export type Get = (path: string) => Promise<unknown>;

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * A Pro organization (login `prefix-...`) with one user of `role` and the given repositories, and
 * `get`, which asks with the user's analytics key and answers the JSON of a 200. Every request
 * forgets the isolate's plans first, so a summary always reads and builds the blocks (never the
 * walk of an organization the isolate has seen small).
 */
export async function summaryOrg(
  prefix: string,
  role: "admin" | "member",
  repos: Record<string, { private: boolean; collaborator?: boolean }>,
) {
  const org = await createOrg(unique(prefix), { plan: "pro", installedAt: "2024-01-01T00:00:00Z" });
  const user = await createUser();
  await addMember(org, user, role);
  for (const [repo, r] of Object.entries(repos))
    await adminOk("PUT", `/internal/v1/organizations/${org}/repositories/${repo}`, {
      private: r.private,
      ...(r.collaborator ? { collaborators: [user] } : {}),
    });
  const { key } = await createKey(user, "analytics");
  return { org, user, key, get: getWithKey(key) };
}

/** `get` (as `summaryOrg`'s) with a new analytics key of `user`. */
async function getOf(user: string): Promise<Get> {
  const { key } = await createKey(user, "analytics");
  return getWithKey(key);
}

/** `get` (as `summaryOrg`'s) with the analytics key `key`. */
export function getWithKey(key: string): Get {
  return async (path) => {
    SUMMARY_PLANS.clear();
    const res = await call(path, { headers: { Authorization: `Bearer ${key}` } });
    if (res.status !== 200) throw new Error(`${path} → ${res.status}: ${await res.text()}`);
    return res.json();
  };
}

/** A new admin of `org`, and its `get`. */
export async function adminGetOf(org: string): Promise<Get> {
  const admin = await createUser();
  await addMember(org, admin, "admin");
  return getOf(admin);
}

export const windowQuery = (org: string, w: Window) =>
  `org=${org}&startDate=${encodeURIComponent(iso(w.start))}&endDate=${encodeURIComponent(iso(w.end))}`;

/**
 * Each grouping asked `passes` times (the first builds the blocks after its answer, the next read
 * them) equals the export's rows for the same parameters (`extra` added to both) grouped; answers
 * the export's rows.
 */
export async function agrees(
  get: Get,
  org: string,
  w: Window,
  label: string,
  groupBys: readonly GroupBy[],
  { extra = "", passes = 2 }: { extra?: string; passes?: number } = {},
): Promise<ExportRow[]> {
  const q = `${windowQuery(org, w)}${extra}`;
  const rows = await exportRows<ExportRow>(get, q, { perPage: 100, maxPages: 100 });
  for (const groupBy of groupBys) {
    const want = referenceAnswer(org, rows, groupBy, w.start, w.end);
    for (let pass = 0; pass < passes; pass++)
      expect(await get(`/api/analytics/v1/summary?${q}&groupBy=${groupBy}`), `${label}: ${groupBy} pass ${pass}`).toEqual(want);
  }
  return rows;
}

/**
 * `db` as seen by a summary's main statement (`WITH RECURSIVE`), each of which is recorded in
 * `statements`; with `refuse`, one sent in one part per group (no `pid %` split) is refused as D1
 * refuses a value over its cap (SQLITE_TOOBIG; local D1 does not enforce it).
 */
export function refusingOnePart(db: D1Database, statements: string[], refuse: boolean): D1Database {
  return new Proxy(db, {
    get(target, name) {
      if (name === "prepare")
        return (sql: string) => {
          if (!sql.startsWith("WITH RECURSIVE")) return target.prepare(sql);
          statements.push(sql);
          if (refuse && !/pid % \d/.test(sql))
            return {
              bind: () => ({
                all: async () => {
                  throw new Error("D1_ERROR: string or blob too big: SQLITE_TOOBIG");
                },
              }),
            };
          return target.prepare(sql);
        };
      const value = Reflect.get(target, name);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
