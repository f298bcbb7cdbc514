/**
 * Pull requests as the summary's attack files write them (`summary-repo-blocks-attack.test.ts`,
 * `summary-months-attack.test.ts`): a pull request with its reviews, findings and AI lines, and the
 * events the control plane's write path takes for them.
 */

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

export interface Pr {
  repo: string;
  n: number;
  author?: string;
  created: number;
  merged: number;
  /** Completed reviews (ms). */
  reviews: number[];
  linesAdded?: number | null;
  findings?: { at: number; fixed: boolean }[];
  ai?: number;
  version?: string;
}

export const VERSION = "2026-11-01T00:00:00.000Z";

/** The events of these pull requests, at version `VERSION` unless one says otherwise. */
export function eventsOf(org: string, prs: readonly Pr[]): unknown[] {
  return prs.flatMap((p) => {
    const ref = { org, repo: p.repo, prNumber: p.n, updatedAt: p.version ?? VERSION };
    return [
      {
        type: "pull_request",
        ...ref,
        author: p.author ?? "alice",
        createdAt: iso(p.created),
        mergedAt: iso(p.merged),
        linesAdded: p.linesAdded === undefined ? p.n : p.linesAdded,
        linesDeleted: 1,
      },
      ...p.reviews.map((r, j) => ({
        type: "review",
        ...ref,
        reviewId: `r-${p.repo.toLowerCase()}-${p.n}-${j}`,
        status: "completed",
        completedAt: iso(r),
      })),
      ...(p.findings ?? []).map((f, j) => ({
        type: "finding",
        ...ref,
        findingId: `f-${p.repo.toLowerCase()}-${p.n}-${j}`,
        createdAt: iso(f.at),
        posted: true,
        aiAddressed: f.fixed,
        feedback: null,
      })),
      ...(p.ai === undefined
        ? []
        : [{ type: "ai_authorship", ...ref, sourceId: `a-${p.repo.toLowerCase()}-${p.n}`, lines: p.ai }]),
    ];
  });
}

/** A pull request merged at `merged` (ms or ISO), created `ageH` hours before, reviewed `reviewH` hours after creation. */
export const pr = (
  repo: string,
  n: number,
  merged: string | number,
  extra: Partial<Pr> & { ageH?: number; reviewH?: number } = {},
): Pr => {
  const m = typeof merged === "number" ? merged : Date.parse(merged);
  const created = m - (extra.ageH ?? 5 + (n % 7)) * HOUR;
  const { ageH: _a, reviewH, ...rest } = extra;
  return { repo, n, created, merged: m, reviews: [created + (reviewH ?? 1 + (n % 3)) * HOUR], ...rest };
};

/**
 * Pull requests every few hours from `from` to `to` (steps of `step` to `step + spread - 1` hours),
 * each reviewed and merged inside its own day: some null line counts, findings and AI lines, a
 * second review at the merge for some (the month blocks' and spans' tests).
 */
export function sameDayPullRequests(
  random: () => number,
  {
    from,
    to,
    repos,
    authors,
    step,
    spread,
  }: { from: number; to: number; repos: string[]; authors: string[]; step: number; spread: number },
): Pr[] {
  const prs: Pr[] = [];
  for (let t = from + 2 * HOUR, n = 1; t < to - 6 * HOUR; t += (step + Math.floor(random() * spread)) * HOUR, n++) {
    const created = t - Math.floor(random() * 4) * HOUR;
    const review = Math.max(created + 1, t - Math.floor(random() * 2 * HOUR));
    const merged = t + Math.floor(random() * 3 * HOUR);
    prs.push({
      repo: repos[Math.floor(random() * repos.length)] as string,
      n,
      author: authors[Math.floor(random() * authors.length)] as string,
      created,
      merged,
      reviews: [review, ...(random() < 0.2 ? [merged - 1] : [])],
      linesAdded: random() < 0.1 ? null : Math.floor(random() * 500),
      findings: random() < 0.3 ? [{ at: review, fixed: random() < 0.5 }] : [],
      ...(random() < 0.5 ? { ai: Math.floor(random() * 100) } : {}),
    });
  }
  return prs;
}
