import { parse } from "csv-parse/sync";
import { describe, expect, it } from "vitest";
import { exportAnalytics } from "../../scripts/lib/export.mjs";
import { addMember, call, createKey, createOrg, createUser, ev, postEventsOk, unique } from "./helpers";

/** Contract section 10: the analytics export as CSV, and `Link`/`X-Next-Cursor` on every non-last page. */

type Row = Record<string, string | number | null>;
type Page = { data: Row[]; nextCursor: string | null };

const PATH = "/api/analytics/v1/prs";
const WINDOW = "startDate=2026-10-01&endDate=2026-10-31";
/** The row fields in the order of the specification (service-spec.md, "Pull request row"), written out independently. */
const SPEC_ORDER = [
  "org",
  "repo",
  "prNumber",
  "author",
  "createdAt",
  "mergedAt",
  "linesAdded",
  "linesDeleted",
  "numberOfServiceIssuesFlagged",
  "numberOfServiceIssuesFixed",
  "serviceFirstReviewedAt",
  "totalAiLinesAuthored",
];
const NUMBERS = new Set([
  "prNumber",
  "linesAdded",
  "linesDeleted",
  "numberOfServiceIssuesFlagged",
  "numberOfServiceIssuesFixed",
  "totalAiLinesAuthored",
]);

/** An organization whose admin holds an analytics key, and pull requests by the given authors (newest merge last in the list). */
async function setup(authors: readonly string[], extra: (i: number) => Record<string, unknown> = () => ({})) {
  const org = await createOrg(unique("csv"), { plan: "pro" });
  const user = await createUser();
  await addMember(org, user, "admin");
  const { key } = await createKey(user, "analytics");
  const events = authors.flatMap((author, i) => {
    const pr = i + 1;
    const day = String(2 + (i % 25)).padStart(2, "0");
    const hour = String(Math.floor(i / 25)).padStart(2, "0");
    const more = extra(i);
    return [
      ev.pr(org, pr, { author, createdAt: "2026-09-20T08:00:00Z", mergedAt: `2026-10-${day}T${hour}:30:00Z`, ...more }),
      ev.review(org, pr, `r${pr}`, { completedAt: `2026-10-${day}T${hour}:00:00Z`, repo: more.repo ?? "api" }),
      ev.finding(org, pr, `f${pr}`, {
        createdAt: `2026-10-${day}T${hour}:10:00Z`,
        aiAddressed: i % 2 === 0,
        repo: more.repo ?? "api",
      }),
      ...(i % 3 === 0 ? [ev.ai(org, pr, `a${pr}`, 5 + i, { repo: more.repo ?? "api" })] : []),
    ];
  });
  await postEventsOk(events);
  const get = (query: string, headers: Record<string, string> = {}) =>
    call(`${PATH}?${query}`, { headers: { Authorization: `Bearer ${key}`, ...headers } });
  const getUrl = (url: string, headers: Record<string, string> = {}) => {
    const u = new URL(url);
    return call(`${u.pathname}${u.search}`, { headers: { Authorization: `Bearer ${key}`, ...headers } });
  };
  return { org, key, get, getUrl };
}

const records = (text: string): string[][] => parse(text, { relax_quotes: false, skip_empty_lines: false }) as string[][];

/**
 * The cell OWASP's advice makes of a text value: a leading single quote before =, +, -, @ (also
 * after leading blanks or invisible characters, and in their full-width and small forms), tab or CR.
 */
const neutralized = (text: string) =>
  /^(?:[\t\r]|[\s\u200B-\u200D\u2060\uFEFF]*[=+\-@\uFF1D\uFF0B\uFF0D\uFF20\uFE66\uFE62\uFE63\uFE6B])/.test(text)
    ? `'${text}`
    : text;

function expectSameRows(csvText: string, page: Page) {
  const [header, ...body] = records(csvText);
  expect(header).toEqual(SPEC_ORDER);
  expect(body).toHaveLength(page.data.length);
  body.forEach((cells, i) => {
    const row = page.data[i] as Row;
    expect(Object.keys(row)).toEqual(SPEC_ORDER);
    SPEC_ORDER.forEach((field, j) => {
      const value = row[field];
      const cell = cells[j];
      if (value === null) expect(cell, field).toBe("");
      else if (NUMBERS.has(field)) expect(Number(cell), field).toBe(value);
      else if (field === "org" || field === "repo" || field === "author") expect(cell, field).toBe(neutralized(String(value)));
      else expect(cell, field).toBe(value);
    });
  });
}

describe("format=csv answers the same page as RFC 4180 CSV", () => {
  it("round trip: every value of every row equals the JSON page's, parsed by csv-parse", async () => {
    const authors = ["alice", "Smith, Ada", 'O"Brien "the dev"', "multi\nline", "cr\r\nlf", "  spaced  ", "ünïcødé ✓"];
    const { org, get } = await setup(authors, (i) => (i % 2 === 1 ? { linesAdded: null, linesDeleted: null } : {}));
    const jsonRes = await get(`org=${org}&${WINDOW}`);
    const page = (await jsonRes.json()) as Page;
    expect(page.data).toHaveLength(authors.length);
    const csvRes = await get(`org=${org}&${WINDOW}&format=csv`);
    expect(csvRes.status).toBe(200);
    expect(csvRes.headers.get("Content-Type")).toBe("text/csv; charset=utf-8");
    expect(csvRes.headers.get("Vary")).toBe("Accept");
    expect(csvRes.headers.get("X-Correlation-Id")).toBeTruthy();
    expect(csvRes.headers.get("X-RateLimit-Remaining")).toMatch(/^\d+$/);
    const text = await csvRes.text();
    expectSameRows(text, page);
    // Every author came back intact, nulls included.
    expect(
      records(text)
        .slice(1)
        .map((r) => r[3]),
    ).toEqual(page.data.map((r) => r.author));
    expect(page.data.some((r) => r.linesAdded === null && r.totalAiLinesAuthored === null)).toBe(true);
  });

  it("CRLF line ends, the header row first, quoting only where needed, null as an empty field", async () => {
    const { org, get } = await setup(['say "hi", then\nleave'], () => ({ linesAdded: null, linesDeleted: 3 }));
    const text = await (await get(`org=${org}&${WINDOW}&format=csv`)).text();
    const header = `${SPEC_ORDER.join(",")}\r\n`;
    expect(text.startsWith(header)).toBe(true);
    const record = text.slice(header.length);
    expect(record.endsWith("\r\n")).toBe(true);
    expect(record).toBe(
      `${org},api,1,"say ""hi"", then\nleave",2026-09-20T08:00:00.000Z,2026-10-02T00:30:00.000Z,,3,1,1,2026-10-02T00:00:00.000Z,3\r\n`,
    );
    // Outside quoted fields, every line end is CRLF.
    expect(text.replace(/"(?:[^"]|"")*"/g, "").match(/\r?\n/g)).toEqual(["\r\n", "\r\n"]);
  });

  it("an empty result is the header row alone", async () => {
    const { org, get } = await setup([]);
    const res = await get(`org=${org}&${WINDOW}&format=csv`);
    expect(await res.text()).toBe(`${SPEC_ORDER.join(",")}\r\n`);
    expect(res.headers.has("Link")).toBe(false);
  });
});

describe("spreadsheet formula injection: text fields starting with =, +, -, @, tab or CR get a leading single quote", () => {
  it("authors and repository names are neutralized; numbers, date-times and harmless text are not", async () => {
    const authors = [
      '=HYPERLINK("https://evil.example","x")',
      "+1+1",
      "-2",
      "@SUM(A1)",
      "\tTab",
      "\rCR",
      "a=b",
      "safe-name",
      "\u00a0=1+1",
      "\n\uff1dSUM(A1)",
    ];
    const { org, get } = await setup(authors, (i) => (i === 7 ? { repo: "-dash-repo" } : {}));
    const page = (await (await get(`org=${org}&${WINDOW}`)).json()) as Page;
    const text = await (await get(`org=${org}&${WINDOW}&format=csv`)).text();
    const rows = records(text).slice(1);
    const byNumber = new Map(rows.map((r) => [Number(r[2]), r]));
    const authorOf = (pr: number) => byNumber.get(pr)?.[3];
    expect(authorOf(1)).toBe(`'=HYPERLINK("https://evil.example","x")`);
    expect(authorOf(2)).toBe("'+1+1");
    expect(authorOf(3)).toBe("'-2");
    expect(authorOf(4)).toBe("'@SUM(A1)");
    expect(authorOf(5)).toBe("'\tTab");
    expect(authorOf(6)).toBe("'\rCR");
    expect(authorOf(7)).toBe("a=b");
    expect(authorOf(8)).toBe("safe-name");
    // Look-alikes a reviewer event can carry: a blank before the sign, the full-width sign.
    expect(authorOf(9)).toBe("'\u00a0=1+1");
    expect(authorOf(10)).toBe("'\n\uff1dSUM(A1)");
    expect(byNumber.get(8)?.[1]).toBe("'-dash-repo");
    // The quoted-and-prefixed form on the wire for the one with quotes and commas.
    expect(text).toContain(`,"'=HYPERLINK(""https://evil.example"",""x"")",`);
    // The JSON page is untouched: the rule is about spreadsheets, not the data.
    expect(page.data.map((r) => r.author).sort()).toEqual([...authors].sort());
    expectSameRows(text, page);
  });
});

describe("format and Accept", () => {
  it("a malformed q-value is no preference at all: JSON", async () => {
    const { org, get } = await setup(["ada"]);
    for (const accept of ["text/csv;q=abc", "text/csv;q=1.5", "text/csv;q=-1"]) {
      const res = await get(`org=${org}`, { Accept: accept });
      expect(res.status).toBe(200);
      expect(res.headers.get("Content-Type")).toBe("application/json; charset=utf-8");
    }
  });

  it("format takes json or csv, trimmed, once; anything else is 400 in JSON, also when CSV was asked for", async () => {
    const { org, get } = await setup(["alice"]);
    expect((await get(`org=${org}&format=json`)).headers.get("Content-Type")).toBe("application/json; charset=utf-8");
    expect((await get(`org=${org}&format=%20csv%20`)).headers.get("Content-Type")).toBe("text/csv; charset=utf-8");
    expect((await get(`org=${org}&format=`)).headers.get("Content-Type")).toBe("application/json; charset=utf-8");
    for (const [query, message] of [
      ["format=xml", "must be json or csv"],
      ["format=CSV", "must be json or csv"],
      ["format=csv&format=json", "must be given at most once"],
    ]) {
      const res = await get(`org=${org}&${query}`, { Accept: "text/csv" });
      expect(res.status, query).toBe(400);
      expect(res.headers.get("Content-Type")).toBe("application/json; charset=utf-8");
      expect(await res.json()).toEqual({ error: "Invalid query parameters.", details: [{ path: "format", message }] });
    }
    // Errors after the parameters stay JSON too.
    const missing = await get(`org=${unique("ghost")}&format=csv`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get("Content-Type")).toBe("application/json; charset=utf-8");
  });

  it("without format, Accept picks CSV only when it names text/csv above JSON; format always wins", async () => {
    const { org, get } = await setup(["alice"]);
    const cases: [Record<string, string>, string, "csv" | "json"][] = [
      [{}, "", "json"],
      [{ Accept: "text/csv" }, "", "csv"],
      [{ Accept: "TEXT/CSV; charset=utf-8" }, "", "csv"],
      [{ Accept: "application/json;q=0.5, text/csv" }, "", "csv"],
      [{ Accept: "text/csv, */*;q=0.1" }, "", "csv"],
      [{ Accept: "text/csv, application/json" }, "", "json"],
      [{ Accept: "text/csv;q=0.5, */*" }, "", "json"],
      [{ Accept: "text/csv;q=0" }, "", "json"],
      [{ Accept: "text/*" }, "", "json"],
      [{ Accept: "*/*" }, "", "json"],
      [{ Accept: "text/html" }, "", "json"],
      [{ Accept: "text/csv" }, "&format=json", "json"],
      [{ Accept: "application/json" }, "&format=csv", "csv"],
    ];
    for (const [headers, query, expected] of cases) {
      const res = await get(`org=${org}${query}`, headers);
      expect(res.status).toBe(200);
      const type = expected === "csv" ? "text/csv; charset=utf-8" : "application/json; charset=utf-8";
      expect(res.headers.get("Content-Type"), `${JSON.stringify(headers)} ${query}`).toBe(type);
      await res.arrayBuffer();
    }
  });
});

describe("Link and X-Next-Cursor on every non-last page", () => {
  const AUTHORS = ["a1", "a2", "a3", "a4", "a5", "a6", "a7"];

  it("present exactly on non-last pages, JSON and CSV, pointing at the same parameters with the new cursor", async () => {
    const { org, get } = await setup(AUTHORS);
    for (const format of ["json", "csv"]) {
      const query = `org=${org}&${WINDOW}&perPage=3&format=${format}&unknown=kept+as+is`;
      const first = await get(query);
      const next = first.headers.get("X-Next-Cursor");
      expect(next).toMatch(/^2026-10-\d\dT\d\d:30:00\.000Z\|\d+$/);
      if (format === "json") expect(((await first.json()) as Page).nextCursor).toBe(next);
      else await first.text();
      const link = first.headers.get("Link") ?? "";
      const match = /^<([^>]+)>; rel="next"$/.exec(link);
      expect(match, link).not.toBeNull();
      const url = new URL(match?.[1] ?? "");
      expect(url.origin + url.pathname).toBe(`https://service.test${PATH}`);
      const sent = new URLSearchParams(query);
      sent.set("cursor", next ?? "");
      expect([...url.searchParams].sort()).toEqual([...sent].sort());
      // Properly URL-encoded: the cursor's | and : never appear raw in the link.
      expect(url.search).toContain(`cursor=${encodeURIComponent(next ?? "")}`);
      const last = await get(`org=${org}&${WINDOW}&perPage=7&format=${format}`);
      expect(last.headers.has("Link")).toBe(false);
      expect(last.headers.has("X-Next-Cursor")).toBe(false);
      await last.arrayBuffer();
    }
  });

  it("following Link walks the whole export exactly once, in order (JSON)", async () => {
    const { org, get, getUrl } = await setup(AUTHORS);
    const all = (await (await get(`org=${org}&${WINDOW}`)).json()) as Page;
    expect(all.data).toHaveLength(AUTHORS.length);
    const rows: Row[] = [];
    let res = await get(`org=${org}&${WINDOW}&perPage=2`);
    for (let pages = 1; ; pages++) {
      const page = (await res.json()) as Page;
      rows.push(...page.data);
      const link = res.headers.get("Link");
      expect(link === null, `page ${pages}`).toBe(page.nextCursor === null);
      if (link === null) {
        expect(pages).toBe(4);
        break;
      }
      res = await getUrl(/^<([^>]+)>/.exec(link)?.[1] ?? "");
    }
    expect(rows).toEqual(all.data);
  });

  it("following Link walks the whole export exactly once, in order (CSV, format by Accept, one header row per page)", async () => {
    const { org, get, getUrl } = await setup(AUTHORS);
    const accept = { Accept: "text/csv" };
    const whole = records(await (await get(`org=${org}&${WINDOW}`, accept)).text());
    const walked: string[][] = [];
    let res = await get(`org=${org}&${WINDOW}&perPage=3`, accept);
    for (;;) {
      expect(res.headers.get("Content-Type")).toBe("text/csv; charset=utf-8");
      const [header, ...rows] = records(await res.text());
      expect(header).toEqual(SPEC_ORDER);
      walked.push(...rows);
      const link = res.headers.get("Link");
      if (link === null) break;
      res = await getUrl(/^<([^>]+)>/.exec(link)?.[1] ?? "", accept);
    }
    expect(walked).toEqual(whole.slice(1));
    expect(new Set(walked.map((r) => r[2])).size).toBe(AUTHORS.length);
  });
});

describe("npm run export against the Worker (scripts/lib/export.mjs)", () => {
  it("walks every page through Link: the CSV file equals the one-page CSV byte for byte, the JSON file the one-page rows", async () => {
    const authors = ["a1", "Smith, Ada", "=1+1", "a4", 'q"uote', "a6", "a7"];
    const { org, key, get } = await setup(authors);
    const fetch = (url: string, init: RequestInit) => {
      const u = new URL(url);
      return call(`${u.pathname}${u.search}`, { headers: init.headers });
    };
    const run = async (format: "csv" | "json") => {
      let out = "";
      const result = await exportAnalytics({
        url: "https://service.test",
        key,
        org,
        start: "2026-10-01",
        end: "2026-10-31",
        format,
        perPage: 2,
        fetch,
        write: async (chunk: string) => {
          out += chunk;
        },
      });
      return { out, result };
    };
    const csv = await run("csv");
    expect(csv.result).toEqual({ pages: 4, rows: authors.length });
    expect(csv.out).toBe(await (await get(`org=${org}&${WINDOW}&format=csv`)).text());
    const json = await run("json");
    expect(json.result).toEqual({ pages: 4, rows: authors.length });
    expect(JSON.parse(json.out)).toEqual(((await (await get(`org=${org}&${WINDOW}`)).json()) as Page).data);
  });
});
