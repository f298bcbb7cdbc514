import type { ComponentChildren } from "preact";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { boundWords, customWindowRefusal, PERIODS, type Period } from "../analytics-window";
import { type Answer, ApiError, api, explain, formatDate, type SessionInfo } from "../api";
import { Chart, ChartKey, type ChartSeries } from "../chart";
import { listRefusal, partialBucket, partialWords } from "../dashboard-figures";
import { Layout, Notice, Pager, TableWrap } from "../layout";
import { count, Dur, duration, type Group, Num, percent, type Summary, withParam } from "./analytics-format";
import { Totals, usePrevious } from "./analytics-totals";
import { apiParams, Picker, PRESETS, readView, type View, viewQuery, windowParams } from "./analytics-view";

type RowPage = Answer<"/app/api/analytics/prs", "GET">;

const ROWS_PER_PAGE = 25;
const TOP = 10;

// --- the page -------------------------------------------------------------------------------------

interface Loaded {
  params: URLSearchParams;
  weeks: Summary;
  repos: Summary;
  authors: Summary;
  view: View;
}
/** The pickers' choices: the repositories and authors with rows in the window (without the list filters). */
interface Choices {
  repos: string[];
  authors: string[];
}

const WHOLE_ORG_REFUSALS = ["org_not_found", "installation_blocked", "plan_required", "org_access_denied"];

/** Why the page shows no figures, in the words of the API's refusal. */
function refusal(error: unknown, org: string): string {
  if (!(error instanceof ApiError)) return explain(error);
  switch (error.code) {
    case "plan_required":
      return `Analytics is part of the Pro plan, and ${org} is not on it. An admin of ${org} can upgrade it.`;
    case "org_access_denied":
      return `You are not a member of ${org}: only its members can see its analytics.`;
    case "repo_access_denied":
      return "You cannot see one of the repositories chosen (it is private and you are not a collaborator, or the organization has no such repository). Pick others.";
    case "invalid_request":
      return `${error.message} ${error.details.map((d) => `${d.path} ${d.message}.`).join(" ")}`;
    default:
      return explain(error);
  }
}

const sortedKeys = (s: Summary) => s.groups.map((g) => g.key).sort((a, b) => a.localeCompare(b));

/** `/app/orgs/{org}/analytics` (contract sections 14 and 21): the summary's charts and tables, and the export's rows. */
export function AnalyticsPage({ session, org }: { session: SessionInfo; org: string }) {
  const [view, setView] = useState<View>(readView);
  const [draft, setDraft] = useState<View>(view);
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [error, setError] = useState("");
  /** Refused whatever the window: no organization, blocked, not Pro, not a member. The pickers go away. */
  const [refused, setRefused] = useState(false);
  const [busy, setBusy] = useState(true);
  /** The pickers' choices as last read: kept through a refusal, so that a list the API refused can be changed. */
  const [choices, setChoices] = useState<Choices>({ repos: [], authors: [] });
  /** The pickers' choices per window (the same whatever the lists): asked once per window. */
  const choicesOf = useRef(new Map<string, Promise<Choices>>());

  useEffect(() => {
    const onPop = () => {
      const v = readView();
      setView(v);
      setDraft(v);
    };
    window.addEventListener("popstate", onPop);
    return () => window.removeEventListener("popstate", onPop);
  }, []);

  useEffect(() => {
    let current = true;
    // A custom window wider than the summary's bound, or lists beyond the API's, are refused here, before any request.
    const tooWide =
      (view.window === "custom" ? customWindowRefusal(view.start, view.end, view.per) : null) ??
      listRefusal(view.repos, "repositories") ??
      listRefusal(view.authors, "authors");
    if (tooWide !== null) {
      setLoaded(null);
      setError(tooWide);
      setBusy(false);
      return;
    }
    setBusy(true);
    setError("");
    const params = apiParams(org, view);
    // The three groupings the page draws come from one request (and one pass over the window's rows).
    const summaries = (groupBy: string, q = params) =>
      api("GET", "/app/api/analytics/summaries", { query: withParam(q, "groupBy", groupBy) }).then((answer) => {
        if (answer.summaries.length !== groupBy.split(",").length) throw new Error("incomplete summaries");
        return answer.summaries;
      });
    const filtered = view.repos.length > 0 || view.authors.length > 0;
    const whole = windowParams(org, view);
    const wholeKey = whole.toString();
    let choices = filtered ? choicesOf.current.get(wholeKey) : undefined;
    if (filtered && choices === undefined) {
      choices = summaries("repo,author", whole).then(([r, a]) => ({
        repos: sortedKeys(r as Summary),
        authors: sortedKeys(a as Summary),
      }));
      choicesOf.current.set(wholeKey, choices);
      choices.catch(() => choicesOf.current.delete(wholeKey));
    }
    Promise.all([summaries(`${view.per},repo,author`).then((s) => s as [Summary, Summary, Summary]), choices ?? null]).then(
      ([[weeks, repos, authors], listed]) => {
        if (!current) return;
        const all = listed ?? { repos: sortedKeys(repos), authors: sortedKeys(authors) };
        if (!filtered) choicesOf.current.set(wholeKey, Promise.resolve(all));
        setLoaded({ params, weeks, repos, authors, view });
        setChoices(all);
        setBusy(false);
      },
      (e) => {
        if (!current) return;
        setLoaded(null);
        setError(refusal(e, org));
        setRefused(e instanceof ApiError && WHOLE_ORG_REFUSALS.includes(e.code));
        setBusy(false);
      },
    );
    return () => {
      current = false;
    };
  }, [org, view]);

  const apply = (next: View) => {
    setDraft(next);
    setView(next);
    window.history.pushState(null, "", `${window.location.pathname}${viewQuery(next)}`);
  };
  const submit = (e: Event) => {
    e.preventDefault();
    apply(draft);
  };

  return (
    <Layout session={session} title={`Analytics of ${org}`}>
      <p>
        <a href="/app/orgs">All organizations</a>
        {" · "}
        <a href={`/app/orgs/${encodeURIComponent(org)}/members`}>Members of {org}</a>
      </p>
      {!refused && (
        <form class="filters" onSubmit={submit} aria-label="Window, grouping, repositories and authors">
          <div class="field">
            <label for="window-select">Window</label>
            <select
              id="window-select"
              aria-describedby="window-help"
              value={draft.window}
              onChange={(e) => {
                const next = { ...draft, window: e.currentTarget.value as View["window"] };
                if (next.window === "custom") setDraft(next);
                else apply(next);
              }}
            >
              <option value="">API default (up to 30 days)</option>
              {PRESETS.map((d) => (
                <option key={d} value={d}>
                  Last {d} days
                </option>
              ))}
              <option value="custom">Custom dates</option>
            </select>
          </div>
          {draft.window === "custom" && (
            <>
              <div class="field">
                <label for="start-date">From (UTC)</label>
                <input
                  id="start-date"
                  type="date"
                  value={draft.start}
                  onInput={(e) => setDraft({ ...draft, start: e.currentTarget.value })}
                />
              </div>
              <div class="field">
                <label for="end-date">To (UTC)</label>
                <input
                  id="end-date"
                  type="date"
                  value={draft.end}
                  onInput={(e) => setDraft({ ...draft, end: e.currentTarget.value })}
                />
              </div>
            </>
          )}
          <div class="field">
            <label for="per-select">Charts per</label>
            <select id="per-select" value={draft.per} onChange={(e) => apply({ ...draft, per: e.currentTarget.value as Period })}>
              {PERIODS.map((p) => (
                <option key={p} value={p}>
                  {p}
                </option>
              ))}
            </select>
          </div>
          <Picker
            id="repos"
            label="Repositories"
            every="All repositories"
            choices={choices.repos}
            chosen={draft.repos}
            onChange={(repos) => apply({ ...draft, repos })}
          />
          <Picker
            id="authors"
            label="Authors"
            every="All authors"
            choices={choices.authors}
            chosen={draft.authors}
            onChange={(authors) => apply({ ...draft, authors })}
          />
          {draft.window === "custom" && <button type="submit">Show</button>}
        </form>
      )}
      {!refused && (
        <p class="muted window-help" id="window-help">
          {draft.window === "custom"
            ? `At most ${boundWords(draft.per)} (the charts' bound).`
            : 'The API default ends now and starts 30 × 24 hours earlier, at this time of day (7 days or 24 hours for an installation younger than 30 or 7 days); "Last 30 days" is 30 whole UTC days, today included, from midnight. Their first days differ, so their counts can too.'}
        </p>
      )}
      <Notice kind="error" text={error} />
      {busy && <p class="loading">Loading…</p>}
      {loaded && <Dashboard org={org} loaded={loaded} stale={busy} />}
    </Layout>
  );
}

/** "repositories api, web; authors ada-admin" or "all repositories you can see, every author". */
function scopeWords(view: View): string {
  const repos =
    view.repos.length === 0
      ? "all repositories you can see"
      : `${view.repos.length === 1 ? "repository" : "repositories"} ${view.repos.join(", ")}`;
  const authors =
    view.authors.length === 0 ? "every author" : `${view.authors.length === 1 ? "author" : "authors"} ${view.authors.join(", ")}`;
  return `${repos}; ${authors}`;
}

/**
 * `stale`: the view changed and its figures are on their way. The previous figures stay in sight (no
 * jump) but dimmed, out of reach (inert: no click, no focus) and without the download link, so
 * nothing of the old view can be taken for the new one.
 */
function Dashboard({ org, loaded, stale }: { org: string; loaded: Loaded; stale: boolean }) {
  const { weeks, repos, authors, params } = loaded;
  const t = weeks.totals;
  const previous = usePrevious(params, weeks);
  return (
    <div class={stale ? "dashboard stale" : "dashboard"} aria-busy={stale ? "true" : "false"} inert={stale}>
      <p class="window" data-testid="window">
        {formatDate(weeks.startDate)} to {formatDate(weeks.endDate)}, {scopeWords(loaded.view)}. Pull requests count once they are
        merged and reviewed in the window.
      </p>
      <Totals totals={t} previous={previous} />
      <WeeklyCharts per={loaded.view.per} weeks={weeks.groups} startDate={weeks.startDate} endDate={weeks.endDate} />
      <div class="cards">
        <TopTable title="Top repositories" name="repo" summary={repos} />
        <TopTable title="Top authors" name="author" summary={authors} />
      </div>
      <Rows key={params.toString()} org={org} params={params} total={t.pullRequests} stale={stale} />
    </div>
  );
}

// --- charts ---------------------------------------------------------------------------------------

const MINUTE = 60_000;
const BUCKET_WORDS: Record<Period, string> = {
  day: "Days are UTC days of the merge.",
  week: "Weeks start on Monday (UTC) and are the weeks of the merge.",
  month: "Months are UTC calendar months of the merge.",
};
/** Axis labels of durations: minutes under an hour, else hours. */
const hours = (v: number) =>
  v < 60 * MINUTE ? `${Math.round(v / MINUTE)} min` : `${Math.round((v / (60 * MINUTE)) * 10) / 10} h`;
/** Round steps for a duration axis. */
const DURATION_STEPS = [5, 10, 15, 30, 60, 120, 180, 240, 360, 720, 1440, 2880, 10080].map((m) => m * MINUTE);
const plain = (v: number) => count(Math.round(v * 10) / 10);
const pct = (v: number) => `${Math.round(v)}%`;

function WeeklyCharts({ per, weeks, startDate, endDate }: { per: Period; weeks: Group[]; startDate: string; endDate: string }) {
  const x = useMemo(() => weeks.map((g) => Date.parse(`${g.key}T00:00:00Z`) / 1000), [weeks]);
  /** The weeks the window covers only in part (its first and last, and any of merges outside it): days covered. */
  const partial = useMemo(
    () =>
      new Map(
        weeks.flatMap((g) => {
          const days = partialBucket(g.key, per, startDate, endDate);
          return days === null ? [] : [[g.key, days] as const];
        }),
      ),
    [weeks, per, startDate, endDate],
  );
  const shaded = useMemo(() => x.filter((_, i) => partial.has((weeks[i] as Group).key)), [x, weeks, partial]);
  const row = (g: Group, cells: ComponentChildren) => (
    <WeekRow key={g.key} week={g.key} partial={partial.get(g.key)}>
      {cells}
    </WeekRow>
  );
  const charts = useMemo(() => {
    const share = (g: Group) => {
      const changed = g.linesAdded + g.linesDeleted;
      return changed > 0 ? (100 * g.aiLinesAuthored) / changed : null;
    };
    return {
      merged: [{ label: "Pull requests merged", values: weeks.map((g) => g.pullRequests), color: "#0b5cad", kind: "bars" }],
      findings: [
        { label: "Flagged", values: weeks.map((g) => g.serviceIssuesFlagged), color: "#b42318", kind: "line" },
        { label: "Fixed", values: weeks.map((g) => g.serviceIssuesFixed), color: "#116329", kind: "line" },
      ],
      review: [
        {
          label: "Median time to first review",
          values: weeks.map((g) => g.medianMsToFirstReview),
          color: "#bc4c00",
          kind: "line",
        },
      ],
      ai: [{ label: "AI-authored share of changed lines", values: weeks.map(share), color: "#8250df", kind: "line" }],
    } satisfies Record<string, ChartSeries[]>;
  }, [weeks]);

  return (
    <section aria-labelledby="weekly-h">
      <h2 id="weekly-h">Per {per}</h2>
      <p class="muted">{BUCKET_WORDS[per]} Each chart is followed by its numbers for screen readers.</p>
      {partial.size > 0 && (
        <p class="partial-note" data-testid="partial-note">
          <span class="swatch swatch-partial" aria-hidden="true" />
          Shaded {per}s are partial, so their figures cover fewer days:{" "}
          {[...partial].map(([key, days]) => `the ${per} of ${key} (${partialWords(days)})`).join("; ")}.
        </p>
      )}
      <div class="charts">
        <Figure
          id="merged"
          title={`Pull requests merged per ${per}`}
          x={x}
          series={charts.merged}
          unit={plain}
          shaded={shaded}
          per={per}
          head={<th scope="col">Pull requests merged</th>}
        >
          {weeks.map((g) =>
            row(
              g,
              <td>
                <Num value={g.pullRequests} />
              </td>,
            ),
          )}
        </Figure>
        <Figure
          id="findings"
          title={`Findings flagged and fixed per ${per}`}
          x={x}
          series={charts.findings}
          unit={plain}
          shaded={shaded}
          per={per}
          head={
            <>
              <th scope="col">Flagged</th>
              <th scope="col">Fixed</th>
            </>
          }
        >
          {weeks.map((g) =>
            row(
              g,
              <>
                <td>
                  <Num value={g.serviceIssuesFlagged} />
                </td>
                <td>
                  <Num value={g.serviceIssuesFixed} />
                </td>
              </>,
            ),
          )}
        </Figure>
        <Figure
          id="review"
          title={`Median time to first review per ${per}`}
          x={x}
          series={charts.review}
          unit={hours}
          incrs={DURATION_STEPS}
          shaded={shaded}
          per={per}
          head={<th scope="col">Median time to first review</th>}
        >
          {weeks.map((g) =>
            row(
              g,
              <td>
                <Dur ms={g.medianMsToFirstReview} />
              </td>,
            ),
          )}
        </Figure>
        <Figure
          id="ai"
          title={`AI-authored share of changed lines per ${per}`}
          x={x}
          series={charts.ai}
          unit={pct}
          shaded={shaded}
          per={per}
          head={
            <>
              <th scope="col">AI-authored lines</th>
              <th scope="col">Lines changed (added + deleted)</th>
              <th scope="col">Share</th>
            </>
          }
        >
          {weeks.map((g) =>
            row(
              g,
              <>
                <td>
                  <Num value={g.aiLinesAuthored} />
                </td>
                <td>
                  <Num value={g.linesAdded + g.linesDeleted} />
                </td>
                <td>{percent(g.aiLinesAuthored, g.linesAdded + g.linesDeleted)}</td>
              </>,
            ),
          )}
        </Figure>
      </div>
    </section>
  );
}

/** A week's row in a chart's table; a partial week says how much of it the window covers. */
function WeekRow({
  week,
  partial,
  children,
}: {
  week: string;
  partial: { days: number; of: number } | undefined;
  children: ComponentChildren;
}) {
  return (
    <tr data-week={week} data-partial={partial === undefined ? undefined : String(partial.days)}>
      <th scope="row">
        {week}
        {partial !== undefined && ` (${partialWords(partial)})`}
      </th>
      {children}
    </tr>
  );
}

/** A chart and its text alternative: a (visually hidden) table of the same numbers, week by week. */
function Figure({
  id,
  title,
  x,
  series,
  unit,
  incrs,
  shaded,
  per,
  head,
  children,
}: {
  id: string;
  title: string;
  x: number[];
  series: ChartSeries[];
  unit: (v: number) => string;
  incrs?: number[];
  shaded: number[];
  per: Period;
  head: ComponentChildren;
  children: ComponentChildren;
}) {
  return (
    <figure class="card figure" aria-labelledby={`${id}-h`} data-chart={id}>
      <figcaption id={`${id}-h`}>{title}</figcaption>
      <ChartKey series={series} />
      <Chart x={x} series={series} unit={unit} incrs={incrs} shaded={shaded} per={per} />
      {/* Tables are not clipped by their own overflow: the hidden one sits in a clipped box. */}
      <div class="sr-only">
        <table data-testid={`${id}-table`}>
          <caption>{title}: the numbers</caption>
          <thead>
            <tr>
              <th scope="col">{per === "day" ? "Day" : `${per === "week" ? "Week" : "Month"} of`}</th>
              {head}
            </tr>
          </thead>
          <tbody>{children}</tbody>
        </table>
      </div>
    </figure>
  );
}

// --- top repositories and authors -------------------------------------------------------------------

function TopTable({ title, name, summary }: { title: string; name: "repo" | "author"; summary: Summary }) {
  const [all, setAll] = useState(false);
  const groups = all ? summary.groups : summary.groups.slice(0, TOP);
  return (
    <section class="card" aria-labelledby={`top-${name}-h`}>
      <h2 id={`top-${name}-h`}>{title}</h2>
      {summary.groups.length === 0 ? (
        <p>No pull requests in this window.</p>
      ) : (
        <TableWrap label={`${title}, table`}>
          <table class="top-table" data-testid={`top-${name}`}>
            <caption class="sr-only">{title}, by pull requests merged</caption>
            <thead>
              <tr>
                <th scope="col">{name === "repo" ? "Repository" : "Author"}</th>
                <th scope="col">Merged</th>
                <th scope="col">Flagged</th>
                <th scope="col">Fixed</th>
                <th scope="col">Median to first review</th>
              </tr>
            </thead>
            <tbody>
              {groups.map((g) => (
                <tr key={g.key} data-key={g.key}>
                  <th scope="row">{g.key}</th>
                  <td>
                    <Num value={g.pullRequests} />
                  </td>
                  <td>
                    <Num value={g.serviceIssuesFlagged} />
                  </td>
                  <td>
                    <Num value={g.serviceIssuesFixed} />
                  </td>
                  <td class="nowrap">
                    <Dur ms={g.medianMsToFirstReview} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      {summary.groups.length > TOP && (
        <button type="button" class="secondary" onClick={() => setAll(!all)}>
          {all ? `Show the top ${TOP}` : `Show all ${summary.groups.length}`}
        </button>
      )}
    </section>
  );
}

// --- the export's rows ------------------------------------------------------------------------------

function Rows({ org, params, total, stale }: { org: string; params: URLSearchParams; total: number; stale: boolean }) {
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const [page, setPage] = useState<RowPage | null>(null);
  const [error, setError] = useState("");
  const cursor = cursors[cursors.length - 1] ?? null;

  useEffect(() => {
    let current = true;
    const q = withParam(params, "perPage", String(ROWS_PER_PAGE));
    if (cursor) q.set("cursor", cursor);
    api("GET", "/app/api/analytics/prs", { query: q }).then(
      (p) => {
        if (!current) return;
        setPage(p);
        setError("");
      },
      (e) => current && setError(refusal(e, org)),
    );
    return () => {
      current = false;
    };
  }, [params, cursor, org]);

  const first = (cursors.length - 1) * ROWS_PER_PAGE + 1;
  const download = new URLSearchParams(params);
  return (
    <section aria-labelledby="rows-h">
      <h2 id="rows-h">Pull requests</h2>
      <div class="actions">
        {stale ? (
          <span class="button disabled" aria-disabled="true">
            Download CSV (updating…)
          </span>
        ) : (
          <a class="button" href={`/app/api/analytics/prs.csv?${download}`} download>
            Download CSV ({count(total)} rows)
          </a>
        )}
        <span class="muted">Every pull request of the window, as the export lists them.</span>
      </div>
      <Notice kind="error" text={error} />
      {page && page.data.length === 0 && <p>No pull requests in this window.</p>}
      {page && page.data.length > 0 && (
        <p class="range" aria-live="polite">
          Rows {count(first)} to {count(first + page.data.length - 1)} of {count(total)}, newest merge first
        </p>
      )}
      {page && page.data.length > 0 && (
        <TableWrap label="Pull requests, table">
          <table data-testid="rows">
            <caption class="sr-only">Pull requests, newest merge first</caption>
            <thead>
              <tr>
                <th scope="col">Pull request</th>
                <th scope="col">Author</th>
                <th scope="col">Merged</th>
                <th scope="col">Lines</th>
                <th scope="col">Flagged</th>
                <th scope="col">Fixed</th>
                <th scope="col">To first review</th>
                <th scope="col">AI lines</th>
              </tr>
            </thead>
            <tbody>
              {page.data.map((r) => (
                <tr key={`${r.repo}#${r.prNumber}`}>
                  <th scope="row">
                    {r.repo}#{r.prNumber}
                  </th>
                  <td>{r.author}</td>
                  <td class="nowrap">{formatDate(r.mergedAt)}</td>
                  <td class="nowrap">
                    {r.linesAdded === null || r.linesDeleted === null ? (
                      <span class="muted">not reported*</span>
                    ) : (
                      `+${r.linesAdded} −${r.linesDeleted}`
                    )}
                  </td>
                  <td>{r.numberOfServiceIssuesFlagged}</td>
                  <td>{r.numberOfServiceIssuesFixed}</td>
                  <td class="nowrap">{duration(Date.parse(r.serviceFirstReviewedAt) - Date.parse(r.createdAt))}</td>
                  <td>{r.totalAiLinesAuthored ?? "—"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      {page?.data.some((r) => r.linesAdded === null || r.linesDeleted === null) && (
        <p class="muted" data-testid="lines-note">
          * GitHub has not reported this pull request's line counts to the service (the export says null); they are left out of
          the line totals, not counted as zero.
        </p>
      )}
      <Pager cursors={cursors} next={page?.nextCursor} go={setCursors} />
    </section>
  );
}
