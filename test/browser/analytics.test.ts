import { readFileSync } from "node:fs";
import { AxeBuilder } from "@axe-core/playwright";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { checkPage, launch } from "./browser";

/**
 * Contract section 14 in a real browser: the analytics dashboard of the demo organization (acme,
 * Pro, six months of pull requests) for ada-admin, every figure checked against the public summary
 * API called with ada-admin's own analytics key and the same parameters.
 */

const url = inject("appUrl");
const adminToken = inject("adminToken");
const DAY = 86_400_000;
let browser: Browser;
let key: string;

interface Figures {
  pullRequests: number;
  linesAdded: number;
  linesDeleted: number;
  serviceIssuesFlagged: number;
  serviceIssuesFixed: number;
  aiLinesAuthored: number;
  pullRequestsWithAiData: number;
  medianMsToFirstReview: number | null;
  medianMsToMerge: number | null;
}
interface Summary {
  startDate: string;
  endDate: string;
  groups: (Figures & { key: string })[];
  totals: Figures;
}

const control = (method: string, path: string, body: unknown) =>
  fetch(`${url}/internal/v1${path}`, {
    method,
    headers: { Authorization: `Bearer ${adminToken}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });

beforeAll(async () => {
  browser = await launch();
  // ada-admin's own key: the reference sees exactly what the page's session sees.
  const res = await control("POST", "/users/1001/api-keys", { kind: "analytics" });
  expect(res.status).toBe(201);
  key = ((await res.json()) as { key: string }).key;
});
afterAll(async () => {
  await browser?.close();
});

async function signedIn(login: string): Promise<{ context: BrowserContext; page: Page; violations: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
  const page = await context.newPage();
  // Anything the CSP blocks (an inline style uPlot might set, say) is reported here.
  const violations: string[] = [];
  page.on("console", (m) => {
    if (m.text().includes("Content Security Policy")) violations.push(m.text());
  });
  await page.goto(`${url}/`);
  await page.getByRole("button", { name: `Sign in as ${login}` }).click();
  await page.waitForURL(`${url}/app/keys`);
  return { context, page, violations };
}

const api = async <T>(path: string, params: Record<string, string>): Promise<T> => {
  const res = await fetch(`${url}${path}?${new URLSearchParams(params)}`, { headers: { Authorization: `Bearer ${key}` } });
  expect(res.status, path).toBe(200);
  return (await res.json()) as T;
};
const summary = (params: Record<string, string>, groupBy: string) =>
  api<Summary>("/api/analytics/v1/summary", { ...params, groupBy });

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const lastDays = (n: number) => ({ startDate: utcDay(Date.now() - (n - 1) * DAY), endDate: utcDay(Date.now()) });
/** A figure as the page holds it: the `value` of its `<data>` element, absent for null (no median). */
const value = (n: number | null) => (n === null ? null : String(n));

/** Waits for the figures of the window the page says it shows, then compares every figure with the API's. */
async function expectFiguresEqualApi(page: Page, params: Record<string, string>) {
  const [weeks, repos, authors] = await Promise.all([
    summary(params, "week"),
    summary(params, "repo"),
    summary(params, "author"),
  ]);
  const window = page.getByTestId("window");
  // The window's first day (the default window's time of day moves with the clock).
  await expect.poll(() => window.textContent()).toMatch(new RegExp(`^${weeks.startDate.slice(0, 10)} \\d\\d:\\d\\d UTC to`));
  await expect.poll(() => window.textContent()).toContain(params.repo ? `repository ${params.repo}` : "all repositories");
  await page.getByText("Loading…").waitFor({ state: "detached" });

  // Totals.
  for (const [name, expected] of Object.entries(weeks.totals)) {
    expect(await page.locator(`[data-figure="${name}"] dd > data`).getAttribute("value"), `total ${name}`).toBe(value(expected));
  }
  expect(weeks.totals.pullRequests).toBeGreaterThan(0);

  // Per week, from each chart's text alternative.
  const column = async (chart: string, cell: number) =>
    page
      .getByTestId(`${chart}-table`)
      .locator("tbody tr")
      .evaluateAll(
        (rows, i) => rows.map((r) => [r.getAttribute("data-week"), r.querySelectorAll("td data")[i]?.getAttribute("value")]),
        cell,
      );
  const keys = weeks.groups.map((g) => g.key);
  expect(await column("merged", 0)).toEqual(weeks.groups.map((g) => [g.key, value(g.pullRequests)]));
  expect(await column("findings", 0)).toEqual(weeks.groups.map((g) => [g.key, value(g.serviceIssuesFlagged)]));
  expect(await column("findings", 1)).toEqual(weeks.groups.map((g) => [g.key, value(g.serviceIssuesFixed)]));
  expect(await column("review", 0)).toEqual(weeks.groups.map((g) => [g.key, value(g.medianMsToFirstReview)]));
  expect(await column("ai", 0)).toEqual(weeks.groups.map((g) => [g.key, value(g.aiLinesAuthored)]));
  expect(await column("ai", 1)).toEqual(weeks.groups.map((g) => [g.key, value(g.linesAdded + g.linesDeleted)]));
  expect(keys.length).toBeGreaterThan(0);
  // Every chart is drawn.
  expect(await page.locator(".chart canvas").count()).toBe(4);

  // Top repositories and authors: the first ten groups, in the API's order.
  for (const [name, groups] of [
    ["repo", repos.groups],
    ["author", authors.groups],
  ] as const) {
    const shown = await page
      .getByTestId(`top-${name}`)
      .locator("tbody tr")
      .evaluateAll((rows) =>
        rows.map((r) => [r.getAttribute("data-key"), ...[...r.querySelectorAll("td data")].map((d) => d.getAttribute("value"))]),
      );
    expect(shown, `top ${name}`).toEqual(
      groups
        .slice(0, 10)
        .map((g) => [
          g.key,
          value(g.pullRequests),
          value(g.serviceIssuesFlagged),
          value(g.serviceIssuesFixed),
          value(g.medianMsToFirstReview),
        ]),
    );
  }
  return weeks;
}

/** The export's rows for the parameters, every page (the reference for paging and the download). */
async function exportRows(params: Record<string, string>) {
  const rows: { repo: string; prNumber: number }[] = [];
  let cursor: string | null = null;
  do {
    const page: { data: { repo: string; prNumber: number }[]; nextCursor: string | null } = await api("/api/analytics/v1/prs", {
      ...params,
      ...(cursor ? { cursor } : {}),
    });
    rows.push(...page.data);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return rows;
}

const shownRows = (page: Page) =>
  page
    .getByTestId("rows")
    .locator("tbody th")
    .evaluateAll((cells) => cells.map((c) => c.textContent));

describe("the analytics dashboard", () => {
  it("shows the demo organization's figures, equal to the summary API's, for every window and repository", async () => {
    const { context, page, violations } = await signedIn("ada-admin");
    await page.goto(`${url}/app/orgs`);
    await page.getByRole("link", { name: "Analytics of acme" }).click();
    await page.waitForURL(`${url}/app/orgs/acme/analytics`);
    await page.getByRole("heading", { name: "Analytics of acme" }).waitFor();

    // The export's default window.
    await expectFiguresEqualApi(page, { org: "acme" });
    await checkPage(page, "analytics");

    // Last 90 days: the URL says so, and the figures follow.
    await page.getByLabel("Window", { exact: true }).selectOption("90");
    await page.waitForURL(/\?window=90$/);
    await expectFiguresEqualApi(page, { org: "acme", ...lastDays(90) });

    // One repository, in the same window.
    await page.getByLabel("Repository", { exact: true }).selectOption("api");
    await page.waitForURL(/\?window=90&repo=api$/);
    const api90 = await expectFiguresEqualApi(page, { org: "acme", ...lastDays(90), repo: "api" });
    expect(api90.totals.pullRequests).toBeGreaterThan(25);

    // A reload shows the same view.
    await page.reload();
    expect(await page.getByLabel("Window", { exact: true }).inputValue()).toBe("90");
    expect(await page.getByLabel("Repository", { exact: true }).inputValue()).toBe("api");
    await expectFiguresEqualApi(page, { org: "acme", ...lastDays(90), repo: "api" });

    // Custom dates, by keyboard only.
    await page.getByLabel("Window", { exact: true }).selectOption("custom");
    await page.getByLabel("From (UTC)").fill("2026-06-01");
    await page.getByLabel("To (UTC)").fill(utcDay(Date.now()));
    await page.getByLabel("To (UTC)").press("Enter");
    await page.waitForURL(/window=custom&start=2026-06-01&end=/);
    await expectFiguresEqualApi(page, { org: "acme", startDate: "2026-06-01", endDate: utcDay(Date.now()), repo: "api" });
    expect(violations).toEqual([]);
    // The listener does hear the CSP: a style attribute set by script is refused and reported.
    await page.evaluate(() => {
      const probe = document.createElement("i");
      document.body.append(probe);
      probe.setAttribute("style", "color: red");
    });
    await expect.poll(() => violations.length).toBe(1);
    await context.close();
  });

  it("pages through the export's rows, and downloads the whole window as CSV", async () => {
    const { context, page } = await signedIn("ada-admin");
    await page.goto(`${url}/app/orgs/acme/analytics?window=365`);
    const params = { org: "acme", ...lastDays(365) };
    const weeks = await expectFiguresEqualApi(page, params);
    await checkPage(page, "analytics-365-days");
    const all = await exportRows(params);
    expect(all.length).toBe(weeks.totals.pullRequests);
    expect(all.length).toBeGreaterThan(50);
    const label = (r: { repo: string; prNumber: number }) => `${r.repo}#${r.prNumber}`;

    await expect.poll(() => shownRows(page)).toEqual(all.slice(0, 25).map(label));
    await page.getByRole("button", { name: "Next page" }).click();
    await expect.poll(() => shownRows(page)).toEqual(all.slice(25, 50).map(label));
    await page.getByText(`Rows 26 to 50 of ${all.length.toLocaleString("en-US")}`).waitFor();
    await page.getByRole("button", { name: "Previous page" }).click();
    await expect.poll(() => shownRows(page)).toEqual(all.slice(0, 25).map(label));

    const link = page.getByRole("link", { name: /^Download CSV/ });
    expect(await link.textContent()).toContain(`${all.length.toLocaleString("en-US")} rows`);
    const [download] = await Promise.all([page.waitForEvent("download"), link.click()]);
    const text = readFileSync((await download.path()) ?? "", "utf8");
    const lines = text.split("\r\n");
    expect(lines[0]).toMatch(/^org,repo,prNumber,author,/);
    expect(lines.at(-1)).toBe("");
    expect(lines.slice(1, -1).map((l) => l.split(",").slice(1, 3).join("#"))).toEqual(all.map(label));
    await context.close();
  });

  it("says why there is nothing to show: not on Pro, not a member", async () => {
    const { context, page } = await signedIn("ada-admin");
    await page.goto(`${url}/app/orgs/globex/analytics`);
    await page.getByRole("alert").getByText("Analytics is part of the Pro plan, and globex is not on it.").waitFor();
    expect(await page.getByTestId("totals").count()).toBe(0);
    expect(await page.getByLabel("Window", { exact: true }).count()).toBe(0);
    await checkPage(page, "analytics-not-pro");

    // A Pro organization ada-admin does not belong to.
    const res = await control("PUT", "/organizations/initech", {
      installationId: 4100999,
      installedAt: new Date(Date.now() - 60 * DAY).toISOString(),
      plan: "pro",
      subscription: { status: "active", billedThroughService: true, purchasedSeats: 3 },
    });
    expect(res.status).toBeLessThan(300);
    await page.goto(`${url}/app/orgs/initech/analytics`);
    await page.getByRole("alert").getByText("You are not a member of initech").waitFor();
    expect(await page.getByTestId("totals").count()).toBe(0);
    await context.close();
  });
});

describe("the dashboard after the outside review (issue 27)", () => {
  const summaryRequests = (page: Page) => {
    const seen: string[] = [];
    page.on("request", (r) => {
      if (r.url().includes("/app/api/analytics/")) seen.push(r.url());
    });
    return seen;
  };

  it("refuses a custom window wider than 400 weeks in words, before asking the API; 400 weeks are shown", async () => {
    const { context, page } = await signedIn("ada-admin");
    const seen = summaryRequests(page);
    await page.goto(`${url}/app/orgs/acme/analytics?window=custom&start=1970-01-01&end=9999-12-31`);
    await page
      .getByRole("alert")
      .getByText(/spans 418,986 weeks; the charts show at most 400 weeks/)
      .waitFor();
    expect(await page.getByTestId("totals").count()).toBe(0);
    expect(seen).toEqual([]);
    await checkPage(page, "analytics-too-wide");

    // The bound exactly: Monday 2019-01-07 to Sunday 400 weeks on is shown; a day more is refused.
    const start = Date.parse("2019-01-07T00:00:00Z");
    const lastDay = utcDay(start + (400 * 7 - 1) * DAY);
    await page.goto(`${url}/app/orgs/acme/analytics?window=custom&start=2019-01-07&end=${lastDay}`);
    await page.getByTestId("totals").waitFor();
    expect(seen.length).toBeGreaterThan(0);
    const asked = seen.length;
    await page.goto(`${url}/app/orgs/acme/analytics?window=custom&start=2019-01-07&end=${utcDay(start + 400 * 7 * DAY)}`);
    await page
      .getByRole("alert")
      .getByText(/spans 401 weeks/)
      .waitFor();
    expect(seen.length).toBe(asked);

    // Typed into the form, it is refused the same way.
    await page.getByLabel("From (UTC)").fill("1990-01-01");
    await page.getByLabel("To (UTC)").fill("2026-01-01");
    await page.getByRole("button", { name: "Show" }).click();
    await page
      .getByRole("alert")
      .getByText(/spans 1,879 weeks/)
      .waitFor();
    expect(seen.length).toBe(asked);
    await context.close();
  });

  it("while another repository's figures load, the old ones are out of reach and there is no old download link", async () => {
    const { context, page } = await signedIn("ada-admin");
    await page.goto(`${url}/app/orgs/acme/analytics?window=90`);
    const link = page.getByRole("link", { name: /^Download CSV/ });
    await link.waitFor();
    // Hold the next summaries until the test has looked (released by the test, not by a timer).
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route("**/app/api/analytics/summary?*", async (route) => {
      await held;
      await route.continue();
    });
    await page.getByLabel("Repository", { exact: true }).selectOption("api");
    await page.waitForURL(/\?window=90&repo=api$/);
    await page.locator(".dashboard[aria-busy='true']").waitFor();
    expect(await page.locator(".dashboard").getAttribute("inert")).not.toBeNull();
    expect(await link.count()).toBe(0);
    await page.getByText("Download CSV (updating…)").waitFor();
    release();
    await expectFiguresEqualApi(page, { org: "acme", ...lastDays(90), repo: "api" });
    expect(await page.locator(".dashboard").getAttribute("inert")).toBeNull();
    const [download] = await Promise.all([page.waitForEvent("download"), link.click()]);
    expect(download.suggestedFilename()).toMatch(/^acme-api-pull-requests-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}\.csv$/);
    await context.close();
  });

  it("draws the first and last weekly bars whole, explains the window choices, and has unique landmarks", async () => {
    const { context, page } = await signedIn("ada-admin");
    await page.goto(`${url}/app/orgs/acme/analytics?window=90`);
    await page.getByTestId("totals").waitFor();
    const weeks = await page
      .getByTestId("merged-table")
      .locator("tbody tr")
      .evaluateAll((rows) => rows.map((r) => Date.parse(`${r.getAttribute("data-week")}T00:00:00Z`) / 1000));
    const range = (await page.locator("[data-chart='merged'] .chart").getAttribute("data-x-range")) ?? "";
    const [min, max] = range.split(",").map(Number);
    // A bar is centred on its week's Monday: half a week of room at each end keeps it whole.
    expect(min).toBeLessThanOrEqual((weeks[0] as number) - 3.5 * 86_400);
    expect(max).toBeGreaterThanOrEqual((weeks.at(-1) as number) + 3.5 * 86_400);

    await page.getByLabel("Window", { exact: true }).selectOption("");
    expect(await page.locator("#window-help").textContent()).toMatch(/whole UTC days.*can too/);
    const landmarks = await new AxeBuilder({ page }).withRules(["landmark-unique"]).analyze();
    expect(landmarks.violations.map((v) => v.nodes.map((n) => n.target.join(" ")))).toEqual([]);
    await context.close();
  });

  it("an unknown app page is a page with a way on", async () => {
    const { context, page } = await signedIn("ada-admin");
    const res = await page.goto(`${url}/app/orgs/acme/analytic`);
    expect(res?.status()).toBe(404);
    await page.getByRole("heading", { name: "No such page" }).waitFor();
    await page.getByRole("link", { name: "Your organizations" }).click();
    await page.waitForURL(`${url}/app/orgs`);
    await context.close();
  });
});
