import { setNewest } from "../lib/newest";
import { DAY_MS, MAX_INSTANT_MS } from "../lib/time";
import { findingsInWindowSql, fixedOf, flaggedOf } from "./pull-request-figures";
import { GAP_TIER_BOUNDS_MS, LAST_GAP_TIER } from "./review-span";

/**
 * Which rows an analytics read (the export's page, the summary's figures) is about, in storage
 * terms: the filters every read takes, resolved against the caller's access
 * (`analytics/read.ts` builds it, once for every read).
 */
export interface AnalyticsScope {
  orgKey: string;
  /**
   * Only these repositories (lower-cased keys, `lib/names` `repoKey`; deduplicated, sorted), or
   * every repository (null). Contract section 21's `repo` list.
   */
  repoKeys: readonly string[] | null;
  /** Only pull requests by these authors (lower-cased logins; deduplicated, sorted), or by anyone (null). Section 21's `author`. */
  authorKeys: readonly string[] | null;
  /** Only these repositories (lower-cased), or no access restriction (an organization admin). */
  accessibleRepoKeys: string[] | null;
  /** Never these repositories (lower-cased; they left the installation). Usually empty. */
  excludedRepoKeys?: string[];
  /** Review window, inclusive, epoch ms. */
  start: number;
  end: number;
}

/** What the analytics page needs, in storage terms: the scope and the page. */
export interface MergedPullRequestQuery extends AnalyticsScope {
  /** Strictly after this (merged_at, id) position in (merged_at DESC, id DESC) order. */
  after: { mergedAt: number; id: number } | null;
  limit: number;
  /** The time of the request: few merges lie after a window that ended less than a day before it. */
  now: number;
}

export interface MergedPullRequest {
  id: number;
  repo: string;
  prNumber: number;
  author: string;
  createdAt: number;
  mergedAt: number;
  linesAdded: number | null;
  linesDeleted: number | null;
  firstReviewedAt: number;
  /** Its posted findings created inside the window, and of them the AI-addressed ones. */
  findingsFlagged: number;
  findingsFixed: number;
  /** The export's `totalAiLinesAuthored`: its AI-authorship records summed and capped (`pull-request-figures.ts`). */
  aiLines: number | null;
}

export interface MergedPullRequestPage {
  rows: MergedPullRequest[];
  /** D1's count of rows the statements read (`meta.rows_read`). */
  rowsRead: number;
  /** How many statements read the page (`pagePlan`, `PagePlans`). */
  statements: number;
}

/**
 * How the statement chooses its plan (see `mergedPullRequestsQuery`).
 *
 * - It walks from the review side instead of the merges for windows of at most `maxSpanMs` holding
 *   at most `maxReviews` completed reviews of the organization. Counting stops at `maxReviews + 1`,
 *   so deciding costs at most that many index entries.
 * - A caller who may read at most `maxRepoWalks` repositories (and asks for none in particular) has
 *   the merges in the window walked per repository, one range each, instead of the organization's
 *   walk filtered by repository. Deciding costs nothing: the list's length is known. Such walks
 *   never read more rows than the organization's walk plus one per repository, but each range
 *   costs compile time (local D1 on workerd 1.20261110.1 and later compiles the statement for every request): on the benchmark's
 *   300,000 pull requests (node:sqlite, compile and run), 13 walks of 200 repositories took
 *   0.64 ms against the organization's walk's 0.80, 24 took 0.89 against 0.63. Hence 16.
 */
export interface PlanLimits {
  maxSpanMs: number;
  maxReviews: number;
  maxRepoWalks: number;
}

export const PLAN_LIMITS: PlanLimits = { maxSpanMs: 7 * DAY_MS, maxReviews: 500, maxRepoWalks: 16 };

/**
 * Merged pull requests with at least one review completed inside the window, newest merge first,
 * with their metrics: the page plan's first statement (`pagePlan`), and when it comes back short
 * and the plan says so, the statement that reads the whole page again in one read. See
 * `mergedPullRequestsQuery` for how a statement finds the rows. `plans`: what this isolate saw of
 * the scope's windows, which may read a first page with the one statement of every range at once
 * (`PagePlans`); none, as `pagePlan` says.
 */
export async function listMergedPullRequests(
  db: D1Database | D1DatabaseSession,
  q: MergedPullRequestQuery,
  limits: PlanLimits = PLAN_LIMITS,
  plans?: PagePlans,
): Promise<MergedPullRequestPage> {
  const plan = pagePlan(q, limits);
  const teaches = plans !== undefined && q.after === null && plan.whenShort !== null;
  const whole = teaches && plans.fitsWhole(q);
  const first = await readPart(db, whole ? mergedPullRequestsQuery(q, limits) : plan.first, q.limit);
  // The rows of the first group (merged in the window or after it): the first statement's, or of
  // the one statement's, those merged from the window's start on (they come first).
  if (teaches) plans.record(q, whole ? first.rows.filter((row) => row.mergedAt >= q.start).length : first.rows.length);
  if (whole || plan.whenShort === null || first.rows.length >= q.limit) return { ...first, statements: 1 };
  // Short: the page is read again whole, in one read, so that it is one snapshot of the data (rows
  // written between two reads could otherwise appear twice in the page, or not at all).
  const again = await readPart(db, plan.whenShort, q.limit);
  return { rows: again.rows, rowsRead: first.rowsRead + again.rowsRead, statements: 2 };
}

/**
 * What an isolate has seen of the export's first pages, to choose between one statement and two
 * (`pagePlan`). A first page whose window (with the merges after it) holds fewer rows than the
 * page is read by two statements, one round trip more than the one statement that walks every
 * range: so it is for every first page of a small organization. For each scope (the
 * organization, the lists, the caller's repositories, the window's length in days and whether it
 * ends now), the rows its window group held at the last first page (`record`); a first page of a
 * scope whose window held fewer than this page's rows is read by the one statement
 * (`fitsWhole`). Both ways answer the same rows, so a wrong guess (a scope that grew) costs time,
 * never correctness, and each first page's count corrects the next choice. Kept per isolate (at
 * most `capacity` scopes, the oldest forgotten first).
 */
export class PagePlans {
  readonly #seen = new Map<number, { windowRows: number; asked: number }>();
  readonly capacity: number;

  constructor(capacity = 4_096) {
    this.capacity = capacity;
  }

  /** Whether this first page is read by the one statement: its scope's window held fewer rows than the page, last time. */
  fitsWhole(q: MergedPullRequestQuery): boolean {
    const seen = this.#seen.get(PagePlans.key(q));
    return seen !== undefined && seen.windowRows < seen.asked && seen.windowRows < q.limit;
  }

  /** Notes a first page's rows of the window group (exact when fewer than the page asked for). */
  record(q: MergedPullRequestQuery, windowRows: number): void {
    setNewest(this.#seen, PagePlans.key(q), { windowRows, asked: q.limit }, this.capacity);
  }

  /**
   * The scope's key: a 53-bit hash of its parts, so that a note costs a few dozen bytes however
   * long the caller's lists (two scopes sharing a hash share a note: a wrong choice of statement,
   * never a wrong page).
   */
  static key(q: MergedPullRequestQuery): number {
    return hash53(
      JSON.stringify([
        q.orgKey,
        q.repoKeys,
        q.authorKeys,
        q.accessibleRepoKeys,
        Math.round((q.end - q.start) / DAY_MS),
        endsRecently(q),
      ]),
    );
  }
}

/**
 * A 53-bit hash of a string (the cyrb53 construction: two 32-bit multiply-xorshift lanes over its
 * UTF-16 code units): a compact key for `PagePlans`, not a digest anyone relies on to tell texts
 * apart.
 */
export function hash53(text: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ unit, 2654435761);
    h2 = Math.imul(h2 ^ unit, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/** One statement's rows (at most `limit`), in (merged_at, id) descending order. */
async function readPart(
  db: D1Database | D1DatabaseSession,
  { sql, params }: { sql: string; params: (string | number)[] },
  limit: number,
): Promise<{ rows: MergedPullRequest[]; rowsRead: number }> {
  // The page as one JSON text (SQLite builds it): local D1 turned each of a page's 101 rows and
  // 12 cells into objects on both sides of its binding, about 16 µs a row; one value cost 0.4 ms
  // less per full page (1.58x -> 1.51x /readyz at 1M, interleaved). The aggregate's order is not
  // promised, so the page is put in the statement's order again below (merged_at, id descending).
  // Larger pages (the download's 1,001 rows) read row by row: see `JSON_PAGE_MAX_ROWS`.
  let tuples: PageTuple[];
  let rowsRead: number;
  if (limit <= JSON_PAGE_MAX_ROWS) {
    const { results, meta } = await db
      .prepare(`SELECT json_group_array(json_array(${PAGE_COLUMNS.join(", ")})) AS page FROM (${sql})`)
      .bind(...params)
      .all<{ page: string }>();
    tuples = JSON.parse(results[0]?.page ?? "[]") as PageTuple[];
    rowsRead = meta.rows_read;
  } else {
    const { results, meta } = await db
      .prepare(sql)
      .bind(...params)
      .all<Record<(typeof PAGE_COLUMNS)[number], unknown>>();
    // Each row's cells by name, in `PageTuple`'s order.
    tuples = results.map((row) => PAGE_COLUMNS.map((column) => row[column]) as PageTuple);
    rowsRead = meta.rows_read;
  }
  // The statement's order (merged_at, id descending), which neither path is promised: SQLite keeps
  // it through the outer SELECT in practice, but only an ORDER BY of its own would promise it.
  tuples.sort((a, b) => b[5] - a[5] || b[0] - a[0]);
  // One literal per row (no rest and spread): the shape every row of every page shares.
  return {
    rows: tuples.map(([id, repo, prNumber, author, createdAt, mergedAt, added, deleted, reviewed, flagged, fixed, ai]) => ({
      id,
      repo,
      prNumber,
      author,
      createdAt,
      mergedAt,
      linesAdded: added,
      linesDeleted: deleted,
      firstReviewedAt: reviewed,
      findingsFlagged: flagged,
      findingsFixed: fixed,
      aiLines: ai,
    })),
    rowsRead,
  };
}

/** A statement and its parameters. */
export interface Statement {
  sql: string;
  params: (string | number)[];
}

/** How a page is read: a first statement, and the one that reads the page whole when the first comes back short (none: the first's rows are the page). */
export interface PagePlan {
  first: Statement;
  whenShort: Statement | null;
}

/**
 * How a page is read (`listMergedPullRequests`).
 *
 * The statement's ranges (`mergedPullRequestsQuery`) fall into three groups that follow each other
 * in the page's order (merged_at descending): the pull requests merged after the window and
 * reviewed inside it (`later`: the before-merge gap tiers; none for a window that ended less than
 * a day before the request), those merged in the window (`window`), and those merged before it
 * (`earlier`: the after-merge gap tiers). A group that lies wholly before the cursor is left out.
 * A window walked by its merges is read by the later and window groups first; only when they leave
 * the page short does a second statement read the page again with the earlier group too. The
 * second reads the page whole rather than its rest so that the page stays one read of the data: a
 * newer version of a pull request moving its merge across the window's start between two reads
 * would otherwise show twice in the page, or not at all. A page whose cursor lies before the
 * window reads the earlier group alone. So the pages of a walk run one range (one per walked
 * repository) until the one that reaches the window's start, nine instead of seventeen for a
 * window in the past until the cursor passes its end, and the eight ranges before the window after
 * it; the page that reaches the window's start runs two statements. Either way the page holds
 * exactly the one statement's rows (`test/worker/export-page-statements.test.ts`, the property tests).
 *
 * A narrow window (`limits.maxSpanMs`) keeps the one statement: it may take its pull requests from
 * the reviews instead, whatever their merge, which no split by merge time can follow. So does a
 * caller who may read nothing.
 *
 * Why: local D1 may compile the statement for every request (workerd 1.20261110.1 and later do),
 * about 0.05 ms per range there: `docs/performance.md`, "Two statements".
 */
export function pagePlan(q: MergedPullRequestQuery, limits: PlanLimits = PLAN_LIMITS): PagePlan {
  const statement = (ranges: RangeGroups): Statement => mergedPullRequestsQuery(q, limits, ranges);
  const narrow = q.end - q.start <= limits.maxSpanMs;
  const nothingToRead = q.accessibleRepoKeys?.length === 0 || q.repoKeys?.length === 0;
  if (narrow || nothingToRead) return { first: statement(EVERY_RANGE), whenShort: null };
  const cursor = q.after?.mergedAt;
  const later = !endsRecently(q) && (cursor === undefined || cursor > q.end);
  const window = cursor === undefined || cursor >= q.start;
  if (!later && !window) return { first: statement({ later, window, earlier: true }), whenShort: null };
  return { first: statement({ later, window, earlier: false }), whenShort: statement({ later, window, earlier: true }) };
}

/** Which of the statement's groups of ranges it walks (`pagePlan`). */
export interface RangeGroups {
  /** Merged after the window (the before-merge gap tiers). */
  later: boolean;
  /** Merged in the window. */
  window: boolean;
  /** Merged before the window (the after-merge gap tiers). */
  earlier: boolean;
}

export const EVERY_RANGE: RangeGroups = { later: true, window: true, earlier: true };

/** Whether the window ended less than a day before the request: no merge after it needs a range of its own. */
const endsRecently = (q: MergedPullRequestQuery): boolean => q.end >= q.now - RECENT_END_MS;

/**
 * Pages of at most this many rows are read as one JSON text; larger ones row by row. D1 refuses a
 * string over 1,000,000 bytes, and a row can take about 1,750 bytes of JSON (an author of 255
 * control characters, 6 bytes each escaped; a 100-character repository; 15-digit instants): a
 * download's 1,001 such rows made 1.74 MB. 500 stay under 900 KB, and the export's 101 under 180 KB.
 */
export const JSON_PAGE_MAX_ROWS = 500;

/** The statement's columns, in `PageTuple`'s order. */
const PAGE_COLUMNS = [
  "id",
  "repo",
  "prNumber",
  "author",
  "createdAt",
  "mergedAt",
  "linesAdded",
  "linesDeleted",
  "firstReviewedAt",
  "findingsFlagged",
  "findingsFixed",
  "aiLines",
] as const;
type PageTuple = [
  id: number,
  repo: string,
  prNumber: number,
  author: string,
  createdAt: MergedPullRequest["createdAt"],
  mergedAt: number,
  linesAdded: MergedPullRequest["linesAdded"],
  linesDeleted: MergedPullRequest["linesDeleted"],
  firstReviewedAt: MergedPullRequest["firstReviewedAt"],
  findingsFlagged: number,
  findingsFixed: number,
  aiLines: MergedPullRequest["aiLines"],
];

/** A page row's findings in the window, both counts in one value. */
const PAGE_FINDINGS = findingsInWindowSql({
  id: "p.id",
  first: "p.first_finding_at",
  last: "p.last_finding_at",
  posted: "p.posted_findings",
  fixed: "p.fixed_findings",
});

/** "No upper limit" as a number: later than any time the service stores. */
const NO_LIMIT = MAX_INSTANT_MS + 1;
const RECENT_END_MS = DAY_MS;
/** What every range yields: (m, id) to order by, the repository for access, the review span for the check. */
const CANDIDATE = "p.merged_at AS m, p.id AS id, p.repo_key AS rk, p.first_reviewed_at AS f, p.last_reviewed_at AS l";

/**
 * The statement and its parameters, shared with the benchmark and the query-plan test so they run
 * the same SQL. How it finds a page, exactly and without a walk that grows with the data:
 *
 * A pull request qualifies when some completed review lies in [start, end]. One that was merged in
 * the window is found by walking the organization's merges in the window backwards
 * (`pull_requests_merged_walk`, or the repository's). One merged before the window qualifies only
 * through a review after its merge, so its `after_merge_tier` (review-span.ts) says how far before
 * the window it can lie: one range per tier over `pull_requests_after_merge_walk`. Merged after the
 * window: the mirror image, with `before_merge_tier`; unless the window ended less than a day
 * before the request, when the first range simply goes on past its end. The ranges are
 * disjoint (the tiers partition the pull requests), each is already in (merged_at DESC, id DESC)
 * order, and SQLite merges them lazily: the walk stops after `limit` rows, reading only as far into
 * each range as the page needs.
 * Every candidate is first checked against its review span from the index entry; only one with
 * reviews on both sides of the window needs a look at its reviews, in one check after the merge.
 *
 * A member's access filters the candidates after the merge. The organization's walk reads about
 * `limit` divided by the share of its merges the member can see: a member who sees 13 of 200
 * repositories skipped some 14 candidates in 15 (about 1,600 rows read for a page). So when the
 * access list is short (`limits.maxRepoWalks`), the merges in the window are walked per repository
 * instead, one `pull_requests_repo_merged_walk` range each (the one-repository walk, once per
 * repository), merged with the others like every range: the walk then reads about what it
 * returns plus one row per repository, and never more than the organization's walk plus that. The
 * tier ranges stay the organization's (one per tier, whatever the access), filtered as before.
 * An empty access list reads no page (a narrow window still counts its reviews).
 *
 * For a narrow window the tier ranges around it dwarf the window itself, so the statement counts
 * the organization's completed reviews in the window first (`reviews_completed_by_time`, at most
 * `limits.maxReviews + 1` entries); when there are few, it takes their pull requests directly and
 * sorts them. The CTE `plan` holds the verdict as the LIMIT of each plan's page, one of them 0:
 * SQLite does not start a subquery whose LIMIT is 0, so the plan not taken reads nothing.
 *
 * D1's limits shape the text: at most 5 terms per compound SELECT (longer unions are nested, which
 * SQLite flattens into one merge), parameters numbered ?1.. and reused, the access list bound once
 * as JSON, and a literal LIMIT (a bound LIMIT made SQLite's merge several times slower). Local D1
 * may compile the statement for every request (workerd 1.20261110.1 and later do; deployed D1
 * promises nothing), so it is kept as small as the ranges allow.
 */
export function mergedPullRequestsQuery(
  q: MergedPullRequestQuery,
  limits: PlanLimits = PLAN_LIMITS,
  ranges: RangeGroups = EVERY_RANGE,
): { sql: string; params: (string | number)[] } {
  if (!Number.isSafeInteger(q.limit) || q.limit < 1) throw new RangeError(`limit must be a positive integer, got ${q.limit}`);
  const params: (string | number)[] = [q.orgKey, q.start, q.end]; // ?1 ?2 ?3
  const bind = (value: string | number): string => `?${params.push(value)}`;
  const cursor = q.after ? { mergedAt: bind(q.after.mergedAt), id: bind(q.after.id) } : null;
  // The repositories asked for (section 21's list): each gets its own walk of the merges in the
  // window (`pull_requests_repo_merged_walk`, one range per name, each name bound once: a name
  // listed twice would yield its rows twice). `IN (SELECT value FROM json_each(?))` over that
  // index would read every merge of the listed repositories in the window and sort them
  // (EXPLAIN: USE TEMP B-TREE FOR ORDER BY) for every page; separate ranges merge in order and
  // stop after the page. The gap tiers' ranges stay the organization's: one name filters them
  // inside the range, a list after the merge (bound once, as JSON, like the access list).
  const named = q.repoKeys === null ? null : [...new Set(q.repoKeys)];
  const repo = named?.length === 1 ? bind(named[0] as string) : null;
  const repoList = named !== null && named.length !== 1 ? bind(JSON.stringify(named)) : null;
  const authors = q.authorKeys === null ? null : bind(JSON.stringify([...new Set(q.authorKeys)]));
  const access = q.accessibleRepoKeys === null ? null : bind(JSON.stringify(q.accessibleRepoKeys));
  // A short access list: the merges in the window walked per repository (each name bound once;
  // a name listed twice would yield its rows twice).
  const accessibleKeys = q.accessibleRepoKeys === null ? null : [...new Set(q.accessibleRepoKeys)];
  // (Bound only when walked: D1 refuses a statement with a parameter it does not use.)
  const repoWalks = !ranges.window
    ? null
    : repo !== null
      ? [repo]
      : named !== null
        ? named.map(bind)
        : accessibleKeys !== null && accessibleKeys.length <= limits.maxRepoWalks
          ? accessibleKeys.map(bind)
          : null;
  // No repository to read: each plan's LIMIT is 0, so SQLite starts neither.
  const pageLimit = accessibleKeys?.length === 0 || named?.length === 0 ? 0 : q.limit;
  const excluded = q.excludedRepoKeys && q.excludedRepoKeys.length > 0 ? bind(JSON.stringify(q.excludedRepoKeys)) : null;
  const byReviews = q.end - q.start <= limits.maxSpanMs;
  // Merges after a window that ended less than a day ago are at most a day's worth (and the odd
  // one dated in the future): the walk over the window simply goes on past its end.
  const recent = endsRecently(q);
  const every = ranges.later && ranges.window && ranges.earlier;
  if (byReviews && !every) throw new RangeError("a narrow window is read in one statement: its plan may take the reviews");

  // Upper bounds of a range: SQLite limits an index range by one upper bound only, so the cursor
  // and the range's own bound go into one MIN().
  const upTo = (bound: string): string => (cursor ? `MIN(${bound}, ${cursor.mergedAt})` : bound);
  const afterCursor = cursor ? [`(p.merged_at < ${cursor.mergedAt} OR p.id < ${cursor.id})`] : [];
  const inRepo = repo ? [`p.repo_key = ${repo}`] : [];
  // INDEXED BY: each range names its index, which spares SQLite weighing all six for each range
  // (compile time) and makes a statement that could not use it fail instead of scanning.
  const range = (index: string, conditions: string[]): string =>
    `SELECT ${CANDIDATE} FROM pull_requests AS p INDEXED BY ${index} WHERE ${[
      "p.org_key = ?1",
      ...conditions,
      ...afterCursor,
      ...inRepo,
      "p.first_reviewed_at <= ?3",
      "p.last_reviewed_at >= ?2",
    ].join(" AND ")}`;

  const tiers = Array.from({ length: LAST_GAP_TIER + 1 }, (_, tier) => ({ tier, bound: GAP_TIER_BOUNDS_MS[tier] }));
  const inWindow = ["p.merged_at >= ?2", `p.merged_at <= ${upTo(recent ? String(NO_LIMIT) : "?3")}`];
  const walk = [
    ...(!ranges.window
      ? []
      : repoWalks
        ? repoWalks.map((key) =>
            range("pull_requests_repo_merged_walk", [...(key === repo ? [] : [`p.repo_key = ${key}`]), ...inWindow]),
          )
        : [range("pull_requests_merged_walk", inWindow)]),
    ...(ranges.earlier ? tiers : []).map(({ tier, bound }) =>
      range("pull_requests_after_merge_walk", [
        `p.after_merge_tier = ${tier}`,
        ...(bound === undefined ? [] : [`p.merged_at >= ?2 - ${bound}`]),
        `p.merged_at <= ${upTo("?2 - 1")}`,
      ]),
    ),
    ...(ranges.later && !recent ? tiers : []).map(({ tier, bound }) =>
      range("pull_requests_before_merge_walk", [
        `p.before_merge_tier = ${tier}`,
        "p.merged_at > ?3",
        `p.merged_at <= ${upTo(bound === undefined ? String(NO_LIMIT) : `?3 + ${bound}`)}`,
      ]),
    ),
  ];
  // The author is not in the walks' indexes: it is looked up for the candidates the merge yields,
  // until the page is full (lower() folds ASCII letters only, as `lib/names` does).
  const accessible = [
    ...(repoList ? [`c.rk IN (SELECT value FROM json_each(${repoList}))`] : []),
    ...(access ? [`c.rk IN (SELECT value FROM json_each(${access}))`] : []),
    ...(excluded ? [`c.rk NOT IN (SELECT value FROM json_each(${excluded}))`] : []),
    ...(authors
      ? [`(SELECT lower(w.author) FROM pull_requests AS w WHERE w.id = c.id) IN (SELECT value FROM json_each(${authors}))`]
      : []),
  ];

  // The walk: the ranges merged in order, newest first (LIMIT -1 keeps SQLite from flattening the
  // subquery and pushing the page's filters into every range, where it would compile them once per
  // range; SQLite still reads the merge's order instead of sorting), then the exact check, once:
  // sure when the span's first or last review lies in the window; only a pull request reviewed on
  // both sides of it, not inside, needs its reviews read. `limit` rows at most.
  const walkPage = (limit: string) => `SELECT c.m AS m, c.id AS id
  FROM (SELECT * FROM (${unionAll(walk)}) ORDER BY m DESC, id DESC LIMIT -1) AS c
  WHERE ${[
    ...accessible,
    "(c.f >= ?2 OR c.l <= ?3 OR EXISTS (SELECT 1 FROM reviews AS r " +
      "WHERE r.pr_id = c.id AND r.status = 'completed' AND r.completed_at BETWEEN ?2 AND ?3))",
  ].join(" AND ")}
  ORDER BY c.m DESC, c.id DESC
  LIMIT ${limit}`;

  const ctes: string[] = [];
  if (!byReviews) {
    ctes.push(`page AS (${walkPage(String(pageLimit))})`);
  } else {
    // Both plans; the count gives one of them a LIMIT of 0, and SQLite does not start that one.
    // Each yields at most a page, so sorting the two together costs nothing.
    const fromReviews = `SELECT c.m AS m, c.id AS id FROM (
    SELECT DISTINCT ${CANDIDATE} FROM reviews AS r JOIN pull_requests AS p ON p.id = r.pr_id WHERE ${[
      "r.org_key = ?1",
      "r.status = 'completed'",
      "r.completed_at BETWEEN ?2 AND ?3",
      "p.merged_at IS NOT NULL",
      ...(cursor ? [`p.merged_at <= ${cursor.mergedAt}`] : []),
      ...afterCursor,
      ...inRepo,
    ].join(" AND ")}) AS c
  ${accessible.length > 0 ? `WHERE ${accessible.join(" AND ")}` : ""}
  ORDER BY c.m DESC, c.id DESC
  LIMIT (SELECT reviews_limit FROM plan)`;
    ctes.push(`plan AS MATERIALIZED (
  SELECT CASE WHEN n > ${limits.maxReviews} THEN ${pageLimit} ELSE 0 END AS walk_limit,
         CASE WHEN n > ${limits.maxReviews} THEN 0 ELSE ${pageLimit} END AS reviews_limit
  FROM (SELECT COUNT(*) AS n FROM (
    SELECT 1 FROM reviews AS r WHERE r.org_key = ?1 AND r.status = 'completed' AND r.completed_at BETWEEN ?2 AND ?3
    LIMIT ${limits.maxReviews + 1})))`);
    ctes.push(`page AS (
  SELECT * FROM (${walkPage("(SELECT walk_limit FROM plan)")})
  UNION ALL
  SELECT * FROM (${fromReviews})
  ORDER BY m DESC, id DESC)`);
  }

  // The page's rows with their figures (`pull-request-figures.ts`): the AI lines as stored (already
  // capped), the findings from the counts stored unless they straddle an edge of the window. Until
  // the twelfth session each row read its findings twice and its AI records once, three seeks a row.
  // `LIMIT -1 OFFSET 0` keeps SQLite from copying the findings' expression into both columns.
  const sql = `WITH ${ctes.join(",\n")}
SELECT id, repo, prNumber, author, createdAt, mergedAt, linesAdded, linesDeleted, firstReviewedAt,
  ${flaggedOf("fw")} AS findingsFlagged, ${fixedOf("fw")} AS findingsFixed, aiLines
FROM (SELECT
  p.id AS id, p.repo AS repo, p.pr_number AS prNumber, p.author AS author,
  p.created_at AS createdAt, p.merged_at AS mergedAt,
  p.lines_added AS linesAdded, p.lines_deleted AS linesDeleted,
  p.first_reviewed_at AS firstReviewedAt,
  ${PAGE_FINDINGS} AS fw,
  p.ai_lines AS aiLines
FROM page JOIN pull_requests AS p ON p.id = page.id
ORDER BY page.m DESC, page.id DESC
LIMIT -1 OFFSET 0)`;
  return { sql, params };
}

/** D1 allows at most 5 terms per compound SELECT; longer unions are nested in groups of at most 5. */
export function unionAll(terms: string[]): string {
  if (terms.length <= 5) return terms.join("\nUNION ALL\n");
  const size = Math.ceil(terms.length / 5);
  const groups: string[] = [];
  for (let i = 0; i < terms.length; i += size) {
    const group = terms.slice(i, i + size);
    groups.push(group.length === 1 ? (group[0] as string) : `SELECT * FROM (${unionAll(group)})`);
  }
  return groups.join("\nUNION ALL\n");
}
