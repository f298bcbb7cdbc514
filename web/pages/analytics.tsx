import type { ComponentChildren } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import { customWindowRefusal, MAX_WEEKS } from "../analytics-window";
import { type Answer, ApiError, api, explain, formatDate, type SessionInfo } from "../api";
import { Chart, ChartKey, type ChartSeries } from "../chart";
import { Layout, Notice, Pager, TableWrap } from "../layout";

type Summary = Answer<"/app/api/analytics/summary", "GET">;
type Group = Summary["groups"][number];
/** The summary's figures (contract section 12): one group, or the totals. */
export type Figures = Summary["totals"];
type RowPage = Answer<"/app/api/analytics/prs", "GET">;

/** What the URL holds, so a view can be linked and reloaded: `?window=30&repo=api`, or `?window=custom&start=…&end=…`. */
interface View {
  window: "" | "7" | "30" | "90" | "365" | "custom";
  start: string;
  end: string;
  repo: string;
}
const PRESETS = ["7", "30", "90", "365"] as const;
const ROWS_PER_PAGE = 25;
const TOP = 10;
const DAY = 86_400_000;

function readView(): View {
  const q = new URLSearchParams(window.location.search);
  const w = q.get("window") ?? "";
  const known = w === "custom" || (PRESETS as readonly string[]).includes(w);
  return {
    window: known ? (w as View["window"]) : "",
    start: q.get("start") ?? "",
    end: q.get("end") ?? "",
    repo: q.get("repo") ?? "",
  };
}

function viewQuery(view: View): string {
  const q = new URLSearchParams();
  if (view.window) q.set("window", view.window);
  if (view.window === "custom") {
    if (view.start) q.set("start", view.start);
    if (view.end) q.set("end", view.end);
  }
  if (view.repo) q.set("repo", view.repo);
  const s = q.toString();
  return s ? `?${s}` : "";
}

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * The API's parameters for a view: the last N UTC days including today (whole days, so a link
 * shows the same window all day), custom dates as given, or none (the export's default window).
 */
export function apiParams(org: string, view: View, now = Date.now()): URLSearchParams {
  const q = new URLSearchParams({ org });
  if (view.repo) q.set("repo", view.repo);
  if (view.window === "custom") {
    if (view.start) q.set("startDate", view.start);
    if (view.end) q.set("endDate", view.end);
  } else if (view.window) {
    q.set("startDate", utcDay(now - (Number(view.window) - 1) * DAY));
    q.set("endDate", utcDay(now));
  }
  return q;
}

const withParam = (q: URLSearchParams, name: string, value: string) => {
  const copy = new URLSearchParams(q);
  copy.set(name, value);
  return copy;
};

// --- formatting: every figure is a <data> element whose value is the API's number ---------------

const count = (n: number) => n.toLocaleString("en-US");

/** 5400000 → "1 h 30 min"; under an hour in minutes, a day and more in days and hours. */
export function duration(ms: number | null): string {
  if (ms === null) return "—";
  const sign = ms < 0 ? "−" : "";
  const minutes = Math.round(Math.abs(ms) / 60_000);
  if (minutes < 60) return `${sign}${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${sign}${hours} h ${minutes % 60} min`;
  return `${sign}${Math.floor(hours / 24)} d ${hours % 24} h`;
}

const percent = (part: number, whole: number) => (whole > 0 ? `${((100 * part) / whole).toFixed(1)}%` : "—");

function Num({ value }: { value: number }) {
  return <data value={String(value)}>{count(value)}</data>;
}
function Dur({ ms }: { ms: number | null }) {
  return <data value={ms === null ? undefined : String(ms)}>{duration(ms)}</data>;
}

// --- the page -------------------------------------------------------------------------------------

interface Loaded {
  params: URLSearchParams;
  weeks: Summary;
  repos: Summary;
  authors: Summary;
  /** The repositories with rows in the window, for the picker (without the repository filter). */
  repoChoices: string[];
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
      return "You cannot see this repository (it is private and you are not a collaborator, or the organization has no such repository). Pick another one.";
    case "invalid_request":
      return `${error.message} ${error.details.map((d) => `${d.path} ${d.message}.`).join(" ")}`;
    default:
      return explain(error);
  }
}

/** `/app/orgs/{org}/analytics` (contract section 14): the summary's charts and tables, and the export's rows. */
export function AnalyticsPage({ session, org }: { session: SessionInfo; org: string }) {
  const [view, setView] = useState<View>(readView);
  const [draft, setDraft] = useState<View>(view);
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [error, setError] = useState("");
  /** Refused whatever the window: no organization, blocked, not Pro, not a member. The pickers go away. */
  const [refused, setRefused] = useState(false);
  const [busy, setBusy] = useState(true);

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
    // A custom window wider than the summary's bound is refused here, before any request.
    const tooWide = view.window === "custom" ? customWindowRefusal(view.start, view.end) : null;
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
    const everyRepo = new URLSearchParams(params);
    everyRepo.delete("repo");
    Promise.all([
      summaries("week,repo,author").then((s) => s as [Summary, Summary, Summary]),
      view.repo ? summaries("repo", everyRepo).then((s) => s[0] as Summary) : null,
    ]).then(
      ([[weeks, repos, authors], all]) => {
        if (!current) return;
        const choices = (all ?? repos).groups.map((g) => g.key).sort((a, b) => a.localeCompare(b));
        setLoaded({ params, weeks, repos, authors, repoChoices: choices });
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
  const choices = loaded?.repoChoices ?? [];
  const repoOptions = draft.repo && !choices.includes(draft.repo) ? [draft.repo, ...choices] : choices;

  return (
    <Layout session={session} title={`Analytics of ${org}`}>
      <p>
        <a href="/app/orgs">All organizations</a>
        {" · "}
        <a href={`/app/orgs/${encodeURIComponent(org)}/members`}>Members of {org}</a>
      </p>
      {!refused && (
        <form class="filters" onSubmit={submit} aria-label="Window and repository">
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
            <label for="repo-select">Repository</label>
            <select id="repo-select" value={draft.repo} onChange={(e) => apply({ ...draft, repo: e.currentTarget.value })}>
              <option value="">All repositories</option>
              {repoOptions.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
          </div>
          {draft.window === "custom" && <button type="submit">Show</button>}
        </form>
      )}
      {!refused && (
        <p class="muted window-help" id="window-help">
          {draft.window === "custom"
            ? `At most ${MAX_WEEKS} weeks (the charts' bound).`
            : 'The API default ends now and starts 30 × 24 hours earlier, at this time of day (7 days or 24 hours for an installation younger than 30 or 7 days); "Last 30 days" is 30 whole UTC days, today included, from midnight. Their first days differ, so their counts can too.'}
        </p>
      )}
      <Notice kind="error" text={error} />
      {busy && <p class="loading">Loading…</p>}
      {loaded && <Dashboard org={org} loaded={loaded} stale={busy} />}
    </Layout>
  );
}

/**
 * `stale`: the view changed and its figures are on their way. The previous figures stay in sight (no
 * jump) but dimmed, out of reach (inert: no click, no focus) and without the download link, so
 * nothing of the old view can be taken for the new one.
 */
function Dashboard({ org, loaded, stale }: { org: string; loaded: Loaded; stale: boolean }) {
  const { weeks, repos, authors, params } = loaded;
  const t = weeks.totals;
  return (
    <div class={stale ? "dashboard stale" : "dashboard"} aria-busy={stale ? "true" : "false"} inert={stale}>
      <p class="window" data-testid="window">
        {formatDate(weeks.startDate)} to {formatDate(weeks.endDate)}
        {params.get("repo") ? `, repository ${params.get("repo")}` : ", all repositories you can see"}. Pull requests count once
        they are merged and reviewed in the window.
      </p>
      <section aria-labelledby="totals-h">
        <h2 id="totals-h">Totals</h2>
        <dl class="stats" data-testid="totals">
          <Stat name="pullRequests" label="Pull requests merged">
            <Num value={t.pullRequests} />
          </Stat>
          <Stat name="linesAdded" label="Lines added">
            <Num value={t.linesAdded} />
          </Stat>
          <Stat name="linesDeleted" label="Lines deleted">
            <Num value={t.linesDeleted} />
          </Stat>
          <Stat name="serviceIssuesFlagged" label="Findings flagged">
            <Num value={t.serviceIssuesFlagged} />
          </Stat>
          <Stat name="serviceIssuesFixed" label="Findings fixed">
            <Num value={t.serviceIssuesFixed} />
          </Stat>
          <Stat name="aiLinesAuthored" label="AI-authored lines">
            <Num value={t.aiLinesAuthored} />
            <span class="muted"> ({percent(t.aiLinesAuthored, t.linesAdded + t.linesDeleted)} of changed lines)</span>
          </Stat>
          <Stat name="pullRequestsWithAiData" label="Pull requests with AI data">
            <Num value={t.pullRequestsWithAiData} />
          </Stat>
          <Stat name="medianMsToFirstReview" label="Median time to first review">
            <Dur ms={t.medianMsToFirstReview} />
          </Stat>
          <Stat name="medianMsToMerge" label="Median time to merge">
            <Dur ms={t.medianMsToMerge} />
          </Stat>
        </dl>
      </section>
      <WeeklyCharts weeks={weeks.groups} />
      <div class="cards">
        <TopTable title="Top repositories" name="repo" summary={repos} />
        <TopTable title="Top authors" name="author" summary={authors} />
      </div>
      <Rows key={params.toString()} org={org} params={params} total={t.pullRequests} stale={stale} />
    </div>
  );
}

function Stat({ name, label, children }: { name: string; label: string; children: ComponentChildren }) {
  return (
    <div class="stat" data-figure={name}>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

// --- charts ---------------------------------------------------------------------------------------

const MINUTE = 60_000;
/** Axis labels of durations: minutes under an hour, else hours. */
const hours = (v: number) =>
  v < 60 * MINUTE ? `${Math.round(v / MINUTE)} min` : `${Math.round((v / (60 * MINUTE)) * 10) / 10} h`;
/** Round steps for a duration axis. */
const DURATION_STEPS = [5, 10, 15, 30, 60, 120, 180, 240, 360, 720, 1440, 2880, 10080].map((m) => m * MINUTE);
const plain = (v: number) => count(Math.round(v * 10) / 10);
const pct = (v: number) => `${Math.round(v)}%`;

function WeeklyCharts({ weeks }: { weeks: Group[] }) {
  const x = useMemo(() => weeks.map((g) => Date.parse(`${g.key}T00:00:00Z`) / 1000), [weeks]);
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
      <h2 id="weekly-h">Per week</h2>
      <p class="muted">
        Weeks start on Monday (UTC) and are the weeks of the merge. Each chart is followed by its numbers for screen readers.
      </p>
      <div class="charts">
        <Figure
          id="merged"
          title="Pull requests merged per week"
          x={x}
          series={charts.merged}
          unit={plain}
          head={<th scope="col">Pull requests merged</th>}
        >
          {weeks.map((g) => (
            <WeekRow key={g.key} week={g.key}>
              <td>
                <Num value={g.pullRequests} />
              </td>
            </WeekRow>
          ))}
        </Figure>
        <Figure
          id="findings"
          title="Findings flagged and fixed per week"
          x={x}
          series={charts.findings}
          unit={plain}
          head={
            <>
              <th scope="col">Flagged</th>
              <th scope="col">Fixed</th>
            </>
          }
        >
          {weeks.map((g) => (
            <WeekRow key={g.key} week={g.key}>
              <td>
                <Num value={g.serviceIssuesFlagged} />
              </td>
              <td>
                <Num value={g.serviceIssuesFixed} />
              </td>
            </WeekRow>
          ))}
        </Figure>
        <Figure
          id="review"
          title="Median time to first review per week"
          x={x}
          series={charts.review}
          unit={hours}
          incrs={DURATION_STEPS}
          head={<th scope="col">Median time to first review</th>}
        >
          {weeks.map((g) => (
            <WeekRow key={g.key} week={g.key}>
              <td>
                <Dur ms={g.medianMsToFirstReview} />
              </td>
            </WeekRow>
          ))}
        </Figure>
        <Figure
          id="ai"
          title="AI-authored share of changed lines per week"
          x={x}
          series={charts.ai}
          unit={pct}
          head={
            <>
              <th scope="col">AI-authored lines</th>
              <th scope="col">Lines changed (added + deleted)</th>
              <th scope="col">Share</th>
            </>
          }
        >
          {weeks.map((g) => (
            <WeekRow key={g.key} week={g.key}>
              <td>
                <Num value={g.aiLinesAuthored} />
              </td>
              <td>
                <Num value={g.linesAdded + g.linesDeleted} />
              </td>
              <td>{percent(g.aiLinesAuthored, g.linesAdded + g.linesDeleted)}</td>
            </WeekRow>
          ))}
        </Figure>
      </div>
    </section>
  );
}

function WeekRow({ week, children }: { week: string; children: ComponentChildren }) {
  return (
    <tr data-week={week}>
      <th scope="row">{week}</th>
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
  head,
  children,
}: {
  id: string;
  title: string;
  x: number[];
  series: ChartSeries[];
  unit: (v: number) => string;
  incrs?: number[];
  head: ComponentChildren;
  children: ComponentChildren;
}) {
  return (
    <figure class="card figure" aria-labelledby={`${id}-h`} data-chart={id}>
      <figcaption id={`${id}-h`}>{title}</figcaption>
      <ChartKey series={series} />
      <Chart x={x} series={series} unit={unit} incrs={incrs} />
      {/* Tables are not clipped by their own overflow: the hidden one sits in a clipped box. */}
      <div class="sr-only">
        <table data-testid={`${id}-table`}>
          <caption>{title}: the numbers</caption>
          <thead>
            <tr>
              <th scope="col">Week of</th>
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
