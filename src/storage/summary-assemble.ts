import { DAY_MS } from "../lib/time";
import { bucketKey, bucketStart, EMPTY_FIGURES, isTimeGroupBy } from "../rules/analytics-summary";
import { DURATION_BUCKETS } from "../rules/duration-buckets";
import type { AnalyticsSummaryGroup, AnalyticsSummaryTotals, SummaryGroupBy } from "../schemas/analytics-summary";
import type { AnalyticsScope } from "./analytics";
import type { BlockColumns, BlockFilter, MonthBlock } from "./summary-days";
import type { GroupMonth } from "./summary-group-months";
import {
  type BlockId,
  type BucketedPart,
  bucketedPart,
  type Durations,
  noSlices,
  type OrgSlices,
  resolveMedians,
  type SliceReader,
} from "./summary-medians";
import { BLOCK, MISSING, MISSING_MONTH, MONTH_BLOCK, type PartRow, removedFrom, STALE, SUMMED } from "./summary-rows";

/**
 * The summary's rows added up (`analytics-summary.ts` reads them: the statement's, and the blocks
 * read in slices): the groups' sums, the blocks' pull requests, the medians (`summary-medians.ts`).
 */

/** Per grouping asked, in the order asked: its groups with rows and the totals (the same for every grouping). */
export interface GroupingsFigures {
  groupings: { groups: AnalyticsSummaryGroup[]; totals: AnalyticsSummaryTotals }[];
  /** D1's count of rows the statement read (`meta.rows_read`). */
  rowsRead: number;
  /** As `SummaryFigures.candidates`. */
  candidates: number;
  /** Of the candidates, those counted from day blocks (`summary-days.ts`) instead of walked. */
  fromBlocks: number;
  /** Of those, the ones counted from month blocks per group (`summary-group-months.ts`). */
  fromGroupMonths: number;
  /** As `SummaryFigures.bucketValues`. */
  bucketValues: number;
  /** As `SummaryFigures.edgeDays`. */
  edgeDays: number;
}

/** Which repositories and authors of a block the scope counts, as the statement's filters choose them. */
export function blockFilter(q: AnalyticsScope): BlockFilter {
  const sets = [q.repoKeys, q.accessibleRepoKeys].filter((list) => list !== null).map((list) => new Set(list));
  const excluded = new Set(q.excludedRepoKeys ?? []);
  const authors = q.authorKeys === null ? null : new Set(q.authorKeys);
  return {
    repo: sets.length === 0 && excluded.size === 0 ? null : (key) => !excluded.has(key) && sets.every((set) => set.has(key)),
    author: authors === null ? null : (key) => key !== null && authors.has(key),
  };
}

/**
 * The statement's rows as the groupings' figures: rows of a group added up, the blocks' pull
 * requests that pass the filter added to their groups, medians from the durations. Also the full
 * days of the window that have no block. Without a reader of the blocks' sorted values, for rows
 * whose blocks were read with their durations (the benchmark's statement serves none).
 */
export async function assemble(
  groupBys: readonly SummaryGroupBy[],
  rows: readonly PartRow[],
  filter: BlockFilter,
  slices: SliceReader = noSlices,
): Promise<Assembled> {
  const figures = accumulator(groupBys, filter);
  for (const row of rows) figures.add(row);
  return figures.result(slices);
}

export type Assembled = Omit<GroupingsFigures, "rowsRead" | "edgeDays"> & {
  /** The window's full days without a block: the organization's (`repoKey` '') or a listed repository's. */
  missingDays: { repoKey: string; day: number }[];
  /** The window's whole months without a listed repository's month block (`month`: its first day). */
  missingMonths: { repoKey: string; month: number }[];
  stale: number;
  rowsRead: number;
  /** Blocks found malformed (`summary-medians.ts` `resolveMedians`): the caller deletes them. */
  corrupt: BlockId[];
};

/** `assemble`, row by row: the blocks read in slices are added as they arrive. */
export function accumulator(groupBys: readonly SummaryGroupBy[], filter: BlockFilter) {
  const groupings = groupBys.map(() => new Map<string, Accumulated>());
  const groupOf = (grouping: number, key: string): Accumulated => {
    const groups = groupings[grouping];
    if (!groups) throw new Error(`summary statement answered grouping ${grouping}`);
    let group = groups.get(key);
    if (!group) {
      const tf: number[] = [];
      const tm: number[] = [];
      group = {
        key,
        ...EMPTY_FIGURES,
        tf: { values: [tf], parts: [], removed: [] },
        tm: { values: [tm], parts: [], removed: [] },
        ownTf: tf,
        ownTm: tm,
      };
      groups.set(key, group);
    }
    return group;
  };
  let candidates = 0;
  let fromBlocks = 0;
  let fromGroupMonths = 0;
  let stale = 0;
  /** The month blocks' parts of the totals' durations (to first review, to merge). */
  const totalParts: [BucketedPart[], BucketedPart[]] = [[], []];
  const missingDays: { repoKey: string; day: number }[] = [];
  const missingMonths: { repoKey: string; month: number }[] = [];
  const add = (row: PartRow): void => {
    const { grouping, key } = row;
    if (grouping === MISSING) {
      missingDays.push({ repoKey: row.rk ?? "", day: Number(key) });
      return;
    }
    if (grouping === MISSING_MONTH) {
      missingMonths.push({ repoKey: row.rk ?? "", month: Number(key) });
      return;
    }
    if (grouping === MONTH_BLOCK) {
      if (row.days === null) throw new Error("a served month block without its days");
      fromBlocks += addMonth(groupBys, JSON.parse(row.days) as MonthBlock, groupOf);
      return;
    }
    if (grouping === STALE) {
      stale += Number(key);
      return;
    }
    if (grouping === BLOCK) {
      const block = { repoKey: row.rk ?? "", day: Number(key), version: row.version ?? 0 };
      fromBlocks += addBlock(groupBys, block, readBlock(row), filter, groupOf);
      return;
    }
    const from = removedFrom(grouping);
    if (from !== null) {
      // A served block's straddling pull requests, as it counted them: they are walked instead.
      if (from === 0) fromBlocks -= row.candidates;
      const group = groupOf(from, key);
      for (const name of SUMMED) group[name] -= row[name];
      if (row.tf0 !== null) for (const value of durationsOf(row.tf0)) group.tf.removed.push(value);
      if (row.tm0 !== null) for (const value of durationsOf(row.tm0)) group.tm.removed.push(value);
      return;
    }
    if (grouping === 0) candidates += row.candidates;
    const group = groupOf(grouping, key);
    for (const name of SUMMED) group[name] += row[name];
    if (row.tf0 !== null) group.tf.values.push(durationsOf(row.tf0));
    if (row.tm0 !== null) group.tm.values.push(durationsOf(row.tm0));
  };
  /**
   * Adds a group's month blocks of one month and kind (`summary-group-months.ts`) to the groupings
   * of that kind: each group's sums, and its counts per bucket as parts of its durations. Counts
   * the month's pull requests once, for the first kind the request asks.
   */
  const addGroupMonth = ({ kind, month, first, last, span, version, pullRequests, groups, sortedFrom }: GroupMonth): void => {
    let added = false;
    // The totals' medians come from the first grouping's groups: of a month block, from its
    // counts of every group added up, and its bucket rows (`summary_group_month_buckets`).
    if (groupBys[0] === kind) {
      // Per bucket in an array (a year by author adds some 300,000 counts: a Map cost 7 ms of it).
      // A bucket outside the scheme is dropped here; the group's own part names it malformed.
      const sums = [new Float64Array(DURATION_BUCKETS), new Float64Array(DURATION_BUCKETS)] as const;
      for (const entry of groups ?? [])
        for (const [metric, at] of [
          [0, 8],
          [1, 10],
        ] as const) {
          const buckets = entry[at] as number[];
          const counts = entry[at + 1] as number[];
          const into = sums[metric];
          for (let i = 0; i < buckets.length; i++) {
            const b = buckets[i] as number;
            into[b] = (into[b] as number) + (counts[i] as number);
          }
        }
      for (const metric of [0, 1] as const) {
        const buckets: number[] = [];
        const counts: number[] = [];
        sums[metric].forEach((count, b) => {
          if (count > 0) {
            buckets.push(b);
            counts.push(count);
          }
        });
        totalParts[metric].push(
          bucketedPart(
            { repoKey: "", day: month, version, group: { kind, key: "", first, last, span, sortedFrom }, metric },
            buckets,
            counts,
            0,
          ),
        );
      }
    }
    groupBys.forEach((groupBy, grouping) => {
      if (groupBy !== kind) return;
      for (const entry of groups ?? []) {
        const [key, n, la, ld, fl, fx, al, nal, tfBuckets, tfCounts, tmBuckets, tmCounts] = entry;
        const group = groupOf(grouping, key);
        addSums(group, [n, la, ld, fl, fx, al, nal]);
        const part = { repoKey: "", day: month, version, group: { kind, key, first, last, span } };
        if (span) {
          // A span keeps each of its group's buckets in a row of its own: a part per duration, read as bucket rows.
          group.tf.parts.push(bucketedPart({ ...part, metric: 0 }, tfBuckets, tfCounts, 0));
          group.tm.parts.push(bucketedPart({ ...part, metric: 1 }, tmBuckets, tmCounts, 0));
          continue;
        }
        group.tf.parts.push(bucketedPart(part, tfBuckets, tfCounts, 0));
        const start = Array.isArray(tfCounts) ? tfCounts.reduce((sum, count) => sum + count, 0) : 0;
        group.tm.parts.push(bucketedPart(part, tmBuckets, tmCounts, start));
      }
      added = true;
    });
    if (added && groupBys.find((groupBy) => groupBy === "repo" || groupBy === "author") === kind) {
      fromBlocks += pullRequests;
      fromGroupMonths += pullRequests;
    }
  };
  const result = async (slices: SliceReader, kept?: OrgSlices): Promise<Assembled> => {
    candidates += fromBlocks;
    // A group of candidates none of which qualified is no group (every row of it failed the check).
    const lists = groupings.map((groups) => [...groups.values()].filter((g) => g.pullRequests > 0));
    // The totals are the same rows whatever the grouping: added up and selected once, from the first,
    // from every group of it, those left without a pull request too: what a group's corrections take
    // away of a head's values must also be taken from the totals' bucket rows (`totalParts`), and
    // such a group adds nothing else (its values less its removed ones are none).
    const first = [...(groupings[0]?.values() ?? [])];
    const totals = { ...EMPTY_FIGURES };
    for (const group of first) for (const name of SUMMED) totals[name] += group[name];
    const all = (of: "tf" | "tm"): Durations => ({
      values: first.flatMap((g) => g[of].values),
      // A group's month block part stands in the totals as its month's bucket rows (`totalParts`).
      parts: [...first.flatMap((g) => g[of].parts.filter((p) => p.group === undefined)), ...totalParts[of === "tf" ? 0 : 1]],
      removed: first.flatMap((g) => g[of].removed),
    });
    const sources = [all("tf"), all("tm"), ...lists.flatMap((list) => list.flatMap((g) => [g.tf, g.tm]))];
    const medians = await resolveMedians(sources, slices, kept);
    if (medians.stale)
      return {
        groupings: [],
        candidates,
        fromBlocks,
        fromGroupMonths,
        missingDays,
        missingMonths,
        stale: stale + 1,
        bucketValues: 0,
        rowsRead: medians.rowsRead,
        corrupt: medians.corrupt,
      };
    let next = 0;
    const take = () => medians.values[next++] ?? null;
    totals.medianMsToFirstReview = take();
    totals.medianMsToMerge = take();
    return {
      groupings: lists.map((list) => ({
        groups: list.map(({ tf: _, tm: __, ownTf: ___, ownTm: ____, ...group }) => ({
          ...group,
          medianMsToFirstReview: take(),
          medianMsToMerge: take(),
        })),
        totals: { ...totals },
      })),
      candidates,
      fromBlocks,
      fromGroupMonths,
      missingDays,
      missingMonths,
      stale,
      bucketValues: medians.bucketValues,
      rowsRead: medians.rowsRead,
      corrupt: [],
    };
  };
  return { add, addGroupMonth, result };
}

/**
 * Adds a listed repository's month block (served only to an unfiltered request of time groupings):
 * each day's sums to its group, and the durations of each run of days in one group as one list
 * (a week or month takes its days' values in one slice). Returns how many pull requests it counted.
 */
function addMonth(
  groupBys: readonly SummaryGroupBy[],
  [days, sums, toFirstReview, toMerge]: MonthBlock,
  groupOf: (grouping: number, key: string) => Accumulated,
): number {
  const total = toFirstReview.length;
  if (total !== toMerge.length || sums.length !== 7 * days.length)
    throw new Error("a month block's durations do not match its days' pull requests");
  for (let grouping = 0; grouping < groupBys.length; grouping++) {
    const groupBy = groupBys[grouping] as SummaryGroupBy;
    if (!isTimeGroupBy(groupBy)) throw new Error(`a month block served to a ${groupBy} grouping`);
    let group: Accumulated | null = null;
    let runFrom = 0;
    let at = 0;
    const flush = (to: number) => {
      if (group === null || to === runFrom) return;
      group.tf.values.push(present(toFirstReview.slice(runFrom, to)));
      group.tm.values.push(present(toMerge.slice(runFrom, to)));
    };
    for (let i = 0; i < days.length; i++) {
      const next = groupOf(grouping, timeKeyOf(groupBy, days[i] as number));
      if (next !== group) {
        flush(at);
        group = next;
        runFrom = at;
      }
      const o = 7 * i;
      next.pullRequests += sums[o] as number;
      next.linesAdded += sums[o + 1] as number;
      next.linesDeleted += sums[o + 2] as number;
      next.serviceIssuesFlagged += sums[o + 3] as number;
      next.serviceIssuesFixed += sums[o + 4] as number;
      next.aiLinesAuthored += sums[o + 5] as number;
      next.pullRequestsWithAiData += sums[o + 6] as number;
      at += sums[o] as number;
    }
    flush(at);
    if (at !== total) throw new Error("a month block's durations do not match its days' pull requests");
  }
  return total;
}

/** A block row's JSON columns, parsed (the ones the statement did not read stay null). */
function readBlock(row: PartRow): BlockColumns {
  const parse = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));
  const totals = parse<BlockColumns["totals"]>(row.totals);
  const durations = parse<BlockColumns["durations"]>(row.durations);
  const counts = parse<BlockColumns["counts"]>(row.counts);
  if (totals === null || (durations === null && counts === null))
    throw new Error("a served summary block without its totals, or neither its durations nor their counts");
  return {
    totals,
    durations,
    counts,
    repos: parse(row.repos),
    authors: parse(row.authors),
    repo_of: parse(row.repo_of),
    author_of: parse(row.author_of),
    figures: parse(row.figures),
  };
}

/** A row's durations: a JSON array from the statement, an array from the Worker's own rows. */
const durationsOf = (values: string | number[]): number[] =>
  typeof values === "string" ? (JSON.parse(values) as number[]) : values;

/** Time groups' keys by grouping and UTC day: a year of blocks asks for each of its days' keys once per grouping. */
const TIME_KEYS = new Map<SummaryGroupBy, Map<number, string>>();

/** The key of the time group (day, week or month) that holds UTC day `day`. */
export function timeKeyOf(groupBy: SummaryGroupBy, day: number): string {
  const keys = TIME_KEYS.get(groupBy) ?? new Map<number, string>();
  TIME_KEYS.set(groupBy, keys);
  let key = keys.get(day);
  if (key === undefined) {
    key = bucketKey(bucketStart(day * DAY_MS, groupBy as "day" | "week" | "month"));
    if (keys.size >= 100_000) keys.clear(); // a bound on what an isolate keeps
    keys.set(day, key);
  }
  return key;
}

/** Adds a block's sums (`BlockSums` order) to a group. */
function addSums(group: Accumulated, [n, la, ld, fl, fx, al, nal]: readonly number[]): void {
  group.pullRequests += n as number;
  group.linesAdded += la as number;
  group.linesDeleted += ld as number;
  group.serviceIssuesFlagged += fl as number;
  group.serviceIssuesFixed += fx as number;
  group.aiLinesAuthored += al as number;
  group.pullRequestsWithAiData += nal as number;
}

/** The values that are not null (a duration is null when the creation time is). */
const present = (values: (number | null)[]): number[] =>
  values.includes(null) ? (values.filter((v) => v !== null) as number[]) : (values as number[]);

/**
 * Adds one day's block to the groupings: each of its pull requests that the filter passes counts
 * wholly (the statement serves a block only when every review and finding of the day lies in the
 * window). Without a filter, from the block's sums (per day, repository or author) and its
 * durations; with one, pull request by pull request. Returns how many it counted.
 */
function addBlock(
  groupBys: readonly SummaryGroupBy[],
  { repoKey, day, version }: { repoKey: string; day: number; version: number },
  block: BlockColumns,
  filter: BlockFilter,
  groupOf: (grouping: number, key: string) => Accumulated,
): number {
  const { totals, repos, authors, figures, counts } = block;
  const membersOf = (groupBy: SummaryGroupBy) =>
    groupBy === "repo"
      ? read(block.repo_of, "repositories of its pull requests")
      : read(block.author_of, "authors of its pull requests");
  const durations = () => read(block.durations, "durations");
  const timeKey = (groupBy: SummaryGroupBy) => timeKeyOf(groupBy, day);
  const read = <T>(column: T | null, name: string): T => {
    if (column === null) throw new Error(`a summary block read without its ${name}`);
    return column;
  };
  if (filter.repo === null && filter.author === null) {
    groupBys.forEach((groupBy, grouping) => {
      if (isTimeGroupBy(groupBy)) {
        const group = groupOf(grouping, timeKey(groupBy));
        addSums(group, totals);
        if (counts !== null) {
          // Durations to merge follow those to first review in the block's sorted values.
          const [tfBuckets, tfCounts, tmBuckets, tmCounts] = counts;
          group.tf.parts.push(bucketedPart({ repoKey, day, version }, tfBuckets, tfCounts, 0));
          const start = tfCounts.reduce((n, count) => n + count, 0);
          group.tm.parts.push(bucketedPart({ repoKey, day, version }, tmBuckets, tmCounts, start));
          return;
        }
        const [toFirstReview, toMerge] = durations();
        group.tf.values.push(present(toFirstReview));
        group.tm.values.push(present(toMerge));
        return;
      }
      const entries = groupBy === "repo" ? read(repos, "repositories") : read(authors, "authors");
      const byIndex: Accumulated[] = [];
      // A row without an author is never merged (its pull request event has not arrived), so never here.
      for (const [i, , name, ...sums] of entries) {
        const group = groupOf(grouping, name as string);
        addSums(group, sums);
        byIndex[i] = group;
      }
      const column = membersOf(groupBy);
      const [toFirstReview, toMerge] = durations();
      for (let i = 0; i < column.length; i++) {
        const group = byIndex[column[i] as number] as Accumulated;
        const tf = toFirstReview[i];
        const tm = toMerge[i];
        if (tf !== null && tf !== undefined) group.ownTf.push(tf);
        if (tm !== null && tm !== undefined) group.ownTm.push(tm);
      }
    });
    return totals[0];
  }
  const repoEntries = read(repos, "repositories");
  const authorEntries = read(authors, "authors");
  const [linesAdded, linesDeleted, aiLines, flagged, fixed] = read(figures, "figures");
  const [toFirstReview, toMerge] = durations();
  const repoOk = repoEntries.map(([, key]) => filter.repo === null || filter.repo(key));
  const authorOk = authorEntries.map(([, key]) => filter.author === null || filter.author(key));
  const names = { repo: repoEntries.map((r) => r[2]), author: authorEntries.map((a) => a[2] as string) };
  // Per grouping, the group of each pull request: one for a time grouping, by index otherwise.
  const pick = groupBys.map((groupBy, grouping): ((i: number) => Accumulated) => {
    if (isTimeGroupBy(groupBy)) {
      const group = groupOf(grouping, timeKey(groupBy));
      return () => group;
    }
    const byIndex = (groupBy === "repo" ? names.repo : names.author).map((name) => groupOf(grouping, name));
    const column = membersOf(groupBy);
    return (i) => byIndex[column[i] as number] as Accumulated;
  });
  const [repo, author] = [membersOf("repo"), membersOf("author")];
  let counted = 0;
  for (let i = 0; i < repo.length; i++) {
    if (!repoOk[repo[i] as number] || !authorOk[author[i] as number]) continue;
    counted++;
    const la = linesAdded[i] ?? null;
    const ld = linesDeleted[i] ?? null;
    const ai = aiLines[i] ?? null;
    const tf = toFirstReview[i] ?? null;
    const tm = toMerge[i] ?? null;
    for (const choose of pick) {
      const group = choose(i);
      group.pullRequests++;
      if (la !== null) group.linesAdded += la;
      if (ld !== null) group.linesDeleted += ld;
      group.serviceIssuesFlagged += flagged[i] as number;
      group.serviceIssuesFixed += fixed[i] as number;
      if (ai !== null) {
        group.aiLinesAuthored += ai;
        group.pullRequestsWithAiData++;
      }
      if (tf !== null) group.ownTf.push(tf);
      if (tm !== null) group.ownTm.push(tm);
    }
  }
  return counted;
}

type Accumulated = AnalyticsSummaryGroup & { tf: Required<Durations>; tm: Required<Durations>; ownTf: number[]; ownTm: number[] };
