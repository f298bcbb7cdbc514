import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, explain, formatDate } from "../api";
import { type Change, describeChange, lengthInWords, previousWindow } from "../dashboard-figures";
import { count, Dur, duration, type Figures, Num, percent, type Summary } from "./analytics-format";

/**
 * The dashboard's totals and their change against the previous window of the same length
 * (contract section 21): a second summary request for `[start - length, start)` with the same
 * repository and author lists, each total shown with a direction and a sentence for screen readers.
 */

type Previous =
  | { state: "loading"; period: string }
  | { state: "none"; period: string; why: string }
  | { state: "error"; period: string; why: string }
  | { state: "ok"; period: string; startDate: string; endDate: string; totals: Figures };

/** The previous window's totals, asked once the window is known (the API's default window is known from its answer). */
export function usePrevious(params: URLSearchParams, weeks: Summary): Previous {
  const period = lengthInWords(weeks.startDate, weeks.endDate);
  const [previous, setPrevious] = useState<Previous>({ state: "loading", period });
  useEffect(() => {
    let current = true;
    const window = previousWindow(weeks.startDate, weeks.endDate);
    if (window === null) {
      setPrevious({ state: "none", period, why: `There is no previous ${period} to compare with: it would start before 1970.` });
      return;
    }
    setPrevious({ state: "loading", period });
    const q = new URLSearchParams(params);
    q.set("startDate", window.startDate);
    q.set("endDate", window.endDate);
    // The cheapest grouping: only the totals are used.
    q.set("groupBy", "repo");
    api("GET", "/app/api/analytics/summary", { query: q }).then(
      (s) => current && setPrevious({ state: "ok", period, ...window, totals: s.totals }),
      (e) => current && setPrevious({ state: "error", period, why: `The previous ${period} could not be read: ${explain(e)}` }),
    );
    return () => {
      current = false;
    };
  }, [params, weeks, period]);
  return previous;
}

const DURATION_WORDS = { more: "longer", less: "shorter" };

/** Totals that are counts (never null) and the two medians (durations: null without rows; shorter is better). */
type CountName = { [K in keyof Figures]: Figures[K] extends number ? K : never }[keyof Figures];
type DurationName = Exclude<keyof Figures, CountName>;

/** The totals in the order shown. */
const TOTALS: readonly (
  | { name: CountName; label: string; isDuration: false }
  | { name: DurationName; label: string; isDuration: true }
)[] = [
  { name: "pullRequests", label: "Pull requests merged", isDuration: false },
  { name: "linesAdded", label: "Lines added", isDuration: false },
  { name: "linesDeleted", label: "Lines deleted", isDuration: false },
  { name: "serviceIssuesFlagged", label: "Findings flagged", isDuration: false },
  { name: "serviceIssuesFixed", label: "Findings fixed", isDuration: false },
  { name: "aiLinesAuthored", label: "AI-authored lines", isDuration: false },
  { name: "pullRequestsWithAiData", label: "Pull requests with AI data", isDuration: false },
  { name: "medianMsToFirstReview", label: "Median time to first review", isDuration: true },
  { name: "medianMsToMerge", label: "Median time to merge", isDuration: true },
];

export function Totals({ totals: t, previous }: { totals: Figures; previous: Previous }) {
  const p = previous.state === "ok" ? previous.totals : null;
  const change = (name: keyof Figures, durations = false) =>
    p && (
      <Delta
        lowerIsBetter={durations}
        previous={p[name]}
        change={describeChange(
          t[name],
          p[name],
          previous.period,
          durations ? duration : count,
          durations ? DURATION_WORDS : undefined,
        )}
      />
    );
  return (
    <section aria-labelledby="totals-h">
      <h2 id="totals-h">Totals</h2>
      <p class="muted" data-testid="previous-window" aria-live="polite">
        {previous.state === "ok" &&
          `Each total is compared with the previous ${previous.period}, ${formatDate(previous.startDate)} to ${formatDate(previous.endDate)}, with the same repositories and authors: ▲ more, ▼ less (green where that is better, red where worse).`}
        {previous.state === "loading" && `Comparing with the previous ${previous.period}…`}
        {(previous.state === "none" || previous.state === "error") && previous.why}
      </p>
      <dl class="stats" data-testid="totals">
        {TOTALS.map((total) => (
          <Stat key={total.name} name={total.name} label={total.label}>
            {total.isDuration ? <Dur ms={t[total.name]} /> : <Num value={t[total.name]} />}
            {total.name === "aiLinesAuthored" && (
              <span class="muted"> ({percent(t.aiLinesAuthored, t.linesAdded + t.linesDeleted)} of changed lines)</span>
            )}
            {change(total.name, total.isDuration)}
          </Stat>
        ))}
      </dl>
    </section>
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

/** The change beside a total: an arrow and a percentage for the eye, the whole sentence for a screen reader. */
function Delta({ change, previous, lowerIsBetter }: { change: Change; previous: number | null; lowerIsBetter: boolean }) {
  // The colour says better (green) or worse (red): a shorter wait for a review is better.
  const tone =
    change.direction === "up" || change.direction === "down"
      ? (change.direction === "down") === lowerIsBetter
        ? "better"
        : "worse"
      : "even";
  return (
    <span
      class={`change change-${tone}`}
      data-direction={change.direction}
      data-previous={previous === null ? "" : String(previous)}
    >
      <span aria-hidden="true">{change.short}</span>
      <span class="sr-only">{change.text}</span>
    </span>
  );
}
