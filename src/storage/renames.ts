import { repoKey } from "../lib/names";
import { CHILD_COLUMNS, PULL_REQUEST_DATA } from "./analytics-columns";
import { refreshPullRequestFiguresSql } from "./pull-request-figures";
import { refreshReviewSpansSql } from "./review-span";

/**
 * Where analytics rows live: an organization's home key (`org_key`) and, optionally, one of its
 * repositories by name (its key is the lower-cased name).
 */
export interface RowScope {
  orgKey: string;
  repo?: string;
}

/**
 * Moves analytics rows from one scope to another, in one D1 transaction: pull requests, and with
 * them their reviews, findings and AI authorship (which point at the pull request's id). Used for
 * a repository rename (one repository of an organization to its new name) and for the rows an
 * organization's new login collected before its rename was applied (every repository of one
 * `org_key` to another). `from` and `to` both name a repository, or neither does.
 *
 * A record may already exist in the target (a delivery or reviewer event that used the new name
 * arrived before the rename was applied). Then the two become one, with the rule of `storeEvents`:
 * the version with the greater `updated_at` holds the data. A pull request is the same record when
 * its repository key (the target's, for a repository rename) and number match: its children move to
 * the surviving target row and the source row goes. Reviews, findings and authorship records are the
 * same record when their id matches within the organization (only when the organization changes):
 * the target row stays, with the source's data when it is newer, and the source row goes.
 *
 * The review span (review-span.ts) and the figures (pull-request-figures.ts) of every pull request
 * whose children or data may have changed are recomputed at the end, from what is stored then: the
 * merged rows, and the rows a replaced child record leaves or loses. They are noted in
 * `pull_requests_to_refresh` first, as the event write path does.
 *
 * Idempotent and retry-safe: all of it or nothing, and a second run finds nothing in the source.
 *
 * Its transaction first checks the shard (migration 0018): a move between shards that has begun to
 * copy either organization away from it fences it, and the move of rows then changes nothing and
 * throws `RowsFenced` (a move of rows changes no row count, so the move's catch-up could not see one
 * landing behind its copy). A repository rename names its entry of the organization's rename log
 * (`renameSeq`): an entry not newer than the last one followed on this shard changes nothing
 * ("already followed": a second webhook consumer replaying an older copy of the log), else it is
 * recorded as followed in the same transaction.
 */
export async function moveRows(
  db: D1Database,
  from: RowScope,
  to: RowScope,
  renameSeq: number | null = null,
): Promise<"moved" | "already followed"> {
  if ((from.repo === undefined) !== (to.repo === undefined)) {
    throw new RangeError("moveRows: both scopes name a repository, or neither does");
  }
  if (renameSeq !== null && (from.orgKey !== to.orgKey || !Number.isSafeInteger(renameSeq) || renameSeq < 1))
    throw new RangeError("moveRows: a rename log entry is a positive whole number, followed within one organization");
  const fromRepoKey = from.repo === undefined ? null : repoKey(from.repo);
  const toRepoKey = to.repo === undefined ? null : repoKey(to.repo);
  const params = [from.orgKey, fromRepoKey, to.orgKey, toRepoKey, to.repo ?? null];
  const run = (sql: string) => db.prepare(sql).bind(...params.slice(0, highestParameter(sql)));
  // First in the transaction: a fenced shard or an entry already followed aborts all of it.
  const check = db.prepare(ROW_MOVE_CHECK).bind(to.orgKey, from.orgKey, renameSeq);

  const statements =
    from.orgKey === to.orgKey && fromRepoKey === toRepoKey
      ? // The same rows: at most a repository's spelling changes.
        to.repo === undefined
        ? []
        : [run(RESPELL_REPOSITORY)]
      : moveStatements(fromRepoKey !== null, from.orgKey === to.orgKey).map(run);
  try {
    await db.batch([check, ...statements]);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (message.includes(FENCED))
      throw new RowsFenced(
        `a move between shards fences ${from.orgKey === to.orgKey ? to.orgKey : `${from.orgKey} or ${to.orgKey}`} on this shard`,
      );
    if (message.includes(ALREADY_FOLLOWED)) return "already followed";
    throw error;
  }
  return "moved";
}

/**
 * A move of rows refused because one of its organizations is fenced on this shard (`move_fences`,
 * migration 0018): a move between shards copies it away from here or to here, or it has left;
 * nothing was changed. The caller waits for that move and runs it again on the shard the
 * organization ends on (`directory/rows.ts`, which also lifts a fence no move holds).
 */
export class RowsFenced extends Error {
  override name = "RowsFenced";
}

/** The names migration 0018's check raises. */
const FENCED = "row_move_fenced";
const ALREADY_FOLLOWED = "rename_already_followed";

/**
 * Migration 0018's check (`row_move_checks`): raises FENCED when either key is fenced on this shard,
 * ALREADY_FOLLOWED when the rename log entry ?3 is not newer than the last one followed of ?1, and
 * else records ?3 as followed (none for a gather: NULL).
 */
const ROW_MOVE_CHECK = "INSERT INTO row_move_checks (org_key, other_key, seq) VALUES (?1, ?2, ?3)";

/** The statements of a move of rows, in order (`moveSql`). */
function moveStatements(oneRepository: boolean, sameOrg: boolean): string[] {
  const sql = moveSql(oneRepository);
  const statements = [sql.notePaired, sql.mergeNewerData];
  for (const child of CHILDREN) {
    // Within one organization a child's key already is the target's: no record exists twice.
    if (!sameOrg) statements.push(...sql.mergeChildren(child));
    statements.push(sql.moveChildren(child, sameOrg));
  }
  statements.push(sql.dropPaired, sql.movePullRequests, REFRESH_NOTED_SPANS, REFRESH_NOTED_FIGURES, FORGET_NOTED);
  return statements;
}

/** SQLite counts parameters up to the highest number used: bind exactly that many values. */
const highestParameter = (sql: string): number => Math.max(0, ...[...sql.matchAll(/\?(\d+)/g)].map((m) => Number(m[1])));

/** A child table: its key within the organization and its data columns (besides `pr_id`), from the schema (`analytics-columns.ts`). */
interface Child {
  table: string;
  key: string;
  data: string[];
}

const CHILDREN: readonly Child[] = CHILD_COLUMNS.map(({ table, key, data }) => ({
  table,
  key: key.name,
  data: data.map((c) => c.name),
}));

/**
 * A pull request's data columns but the merge time (`analytics-columns.ts`): what the row that
 * supersedes the other hands on. `merged_at` follows the merge rule, as the event write path
 * applies it (`events.ts`, contract section 17: a merge is final whichever path a pull request
 * came through).
 */
const VERSIONED_DATA = PULL_REQUEST_DATA.filter((c) => c.name !== "merged_at").map((c) => c.name);

/**
 * The statements of a move. Parameters: ?1 the source `org_key`, ?2 the source repository key,
 * ?3 the target `org_key`, ?4 the target repository key, ?5 the target repository's name (?2, ?4
 * and ?5 only when the move is of one repository). `o` is a source pull request and `t` the target
 * row of the same pull request, when there is one.
 */
function moveSql(oneRepository: boolean) {
  const source = (p: string) => `${p}.org_key = ?1${oneRepository ? ` AND ${p}.repo_key = ?2` : ""}`;
  const pair = `t.org_key = ?3 AND t.repo_key = ${oneRepository ? "?4" : "o.repo_key"} AND t.pr_number = o.pr_number`;
  const sourceIds = `SELECT o.id FROM pull_requests AS o WHERE ${source("o")}`;
  const pairedIds = `SELECT o.id FROM pull_requests AS o JOIN pull_requests AS t ON ${pair} WHERE ${source("o")}`;
  /** The id a child of source pull request `prId` points at after the move. */
  const targetOf = (prId: string) =>
    `coalesce((SELECT t.id FROM pull_requests AS o JOIN pull_requests AS t ON ${pair} WHERE o.id = ${prId}), ${prId})`;
  // As a move between shards judges them (`copy.ts`: a row is copied as an event of its version, a
  // row from before versions as version 0; the event write path takes a stored NULL version as
  // older than any event): the same rows whichever path gathers them. An outside review found a
  // row from before versions losing its data to a placeholder here and keeping it across shards.
  const isNewer = (a: string, b: string) => `(${b}.updated_at IS NULL OR coalesce(${a}.updated_at, 0) > ${b}.updated_at)`;
  /**
   * The source pull request `o` supersedes the target's row `t`: newer, or the same version merging
   * an unmerged state; never a placeholder (no data: the copy sends no event for one).
   */
  const supersedes = `(o.author IS NOT NULL AND o.created_at IS NOT NULL AND (${isNewer("o", "t")}
    OR (coalesce(o.updated_at, 0) = t.updated_at AND t.merged_at IS NULL AND o.merged_at IS NOT NULL)))`;

  return {
    /** The surviving target rows of pull requests stored under both scopes: their spans change. */
    notePaired: `
INSERT INTO pull_requests_to_refresh (pr_id)
SELECT t.id FROM pull_requests AS o JOIN pull_requests AS t ON ${pair} WHERE ${source("o")}
ON CONFLICT (pr_id) DO NOTHING`,

    /**
     * Where both scopes hold a pull request: the source's data when it supersedes the target's
     * (`rules/pull-request-state.ts` `supersedes`: a newer version, or the same version merging an
     * unmerged state), keeping the target's merge when the source has none; else only an older
     * merge of the source onto an unmerged target (its merge time alone). No row is unmerged.
     */
    mergeNewerData: `
UPDATE pull_requests AS t SET
  ${[...(oneRepository ? [] : ["repo"]), ...VERSIONED_DATA].map((c) => `${c} = iif(${supersedes}, o.${c}, t.${c})`).join(",\n  ")},
  merged_at = iif(${supersedes}, coalesce(o.merged_at, t.merged_at), o.merged_at)
FROM pull_requests AS o
WHERE ${source("o")} AND ${pair} AND (${supersedes} OR (t.merged_at IS NULL AND o.merged_at IS NOT NULL))`,

    /**
     * A child record stored in both organizations: the target row takes the source's data (and
     * pull request) when the source is newer; the source row goes. A child that changes rows this
     * way changes the pull request it leaves and the one it loses or joins (a review their spans,
     * a finding or authorship record their figures).
     */
    mergeChildren: ({ table, key, data }: Child) => {
      const both = `FROM ${table} AS s JOIN ${table} AS x ON x.org_key = ?3 AND x.${key} = s.${key}
WHERE s.org_key = ?1 AND s.pr_id IN (${sourceIds})`;
      return [
        `
INSERT INTO pull_requests_to_refresh (pr_id)
SELECT x.pr_id ${both}
UNION SELECT s.pr_id ${both}
ON CONFLICT (pr_id) DO NOTHING`,
        `
UPDATE ${table} AS x SET ${data.map((c) => `${c} = s.${c}`).join(", ")}, pr_id = ${targetOf("s.pr_id")}
FROM ${table} AS s
WHERE x.org_key = ?3 AND s.org_key = ?1 AND s.${key} = x.${key} AND s.pr_id IN (${sourceIds}) AND ${isNewer("s", "x")}`,
        `
DELETE FROM ${table} AS s
WHERE s.org_key = ?1 AND s.pr_id IN (${sourceIds})
  AND EXISTS (SELECT 1 FROM ${table} AS x WHERE x.org_key = ?3 AND x.${key} = s.${key})`,
      ];
    },

    /**
     * The children follow their pull request: to the target's organization, and to the surviving
     * target row where there is one (within one organization only those need a write).
     */
    moveChildren: ({ table }: Child, sameOrg: boolean) => `
UPDATE ${table} SET org_key = ?3, pr_id = ${targetOf(`${table}.pr_id`)}
WHERE org_key = ?1 AND pr_id IN (${sameOrg ? pairedIds : sourceIds})`,

    /** The source rows of pull requests the target already held: merged above, their children moved. */
    dropPaired: `DELETE FROM pull_requests WHERE id IN (${pairedIds})`,

    /** The other source rows move, keeping their ids (so their children still point at them). */
    movePullRequests: `
UPDATE pull_requests AS o SET org_key = ?3${oneRepository ? ", repo_key = ?4, repo = ?5" : ""}
WHERE ${source("o")}`,
  };
}

const RESPELL_REPOSITORY = "UPDATE pull_requests SET repo = ?5 WHERE org_key = ?1 AND repo_key = ?2 AND repo <> ?5";

const REFRESH_NOTED_SPANS = refreshReviewSpansSql("SELECT pr_id AS id FROM pull_requests_to_refresh");

const REFRESH_NOTED_FIGURES = refreshPullRequestFiguresSql("SELECT pr_id AS id FROM pull_requests_to_refresh");

const FORGET_NOTED = "DELETE FROM pull_requests_to_refresh";
