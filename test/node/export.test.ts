import { describe, expect, it } from "vitest";
import {
  countCsvRecords,
  EXIT,
  ExportError,
  exportAnalytics,
  firstPageUrl,
  nextLink,
  retryAfterSeconds,
} from "../../scripts/lib/export.mjs";

/**
 * The logic of `npm run export` against scripted answers: how it follows Link, joins pages, waits
 * on 429 and fails. (Its walk against the real Worker is in test/worker/analytics-csv.test.ts.)
 */

const BASE = "http://127.0.0.1:8787";
const HEADER = "org,repo,prNumber";

interface Answer {
  status?: number;
  body?: string;
  headers?: Record<string, string>;
}

/** A fake service answering a list of answers in turn; records the URLs asked. */
function service(answers: Answer[]) {
  const asked: { url: string; headers: Headers }[] = [];
  const fetch = async (url: string, init: RequestInit) => {
    asked.push({ url, headers: new Headers(init.headers) });
    const answer = answers.shift();
    if (!answer) throw new Error(`unexpected request ${url}`);
    return new Response(answer.body ?? "", { status: answer.status ?? 200, headers: answer.headers ?? {} });
  };
  return { fetch, asked };
}

const csv = (body: string, next?: string): Answer => ({
  body,
  headers: { "Content-Type": "text/csv; charset=utf-8", ...(next ? { Link: `<${next}>; rel="next"` } : {}) },
});
const jsonPage = (data: unknown[], next?: string): Answer => ({
  body: JSON.stringify({ data, nextCursor: next ? "c" : null }),
  headers: { "Content-Type": "application/json; charset=utf-8", ...(next ? { Link: `<${next}>; rel="next"` } : {}) },
});

async function run(answers: Answer[], options: Record<string, unknown> = {}) {
  const { fetch, asked } = service(answers);
  let out = "";
  const slept: number[] = [];
  const events: unknown[] = [];
  const result = await exportAnalytics({
    url: BASE,
    key: "cak_test",
    org: "acme",
    start: "2026-09-01",
    end: "2026-11-30",
    format: "csv",
    fetch,
    write: async (chunk: string) => {
      out += chunk;
    },
    sleep: async (ms: number) => {
      slept.push(ms);
    },
    progress: (e: unknown) => events.push(e),
    ...options,
  });
  return { result, out, asked, slept, events };
}

describe("npm run export: walking the pages", () => {
  it("CSV: follows Link to the end, one header row, records joined in order", async () => {
    const p2 = `${BASE}/api/analytics/v1/prs?org=acme&cursor=2026-10-02T00%3A00%3A00.000Z%7C7`;
    const p3 = `${BASE}/api/analytics/v1/prs?org=acme&cursor=2026-10-01T00%3A00%3A00.000Z%7C3`;
    const { result, out, asked, events } = await run([
      csv(`${HEADER}\r\nacme,api,9\r\nacme,"a,b",8\r\n`, p2),
      csv(`${HEADER}\r\nacme,api,"7\r\nstill 7"\r\n`, p3),
      csv(`${HEADER}\r\nacme,web,3\r\n`),
    ]);
    expect(out).toBe(`${HEADER}\r\nacme,api,9\r\nacme,"a,b",8\r\nacme,api,"7\r\nstill 7"\r\nacme,web,3\r\n`);
    expect(result).toEqual({ pages: 3, rows: 4 });
    expect(asked.map((a) => a.url)).toEqual([
      `${BASE}/api/analytics/v1/prs?org=acme&startDate=2026-09-01&endDate=2026-11-30&perPage=100&format=csv`,
      p2,
      p3,
    ]);
    expect(asked[0]?.headers.get("Authorization")).toBe("Bearer cak_test");
    expect(asked[0]?.headers.get("Accept")).toBe("text/csv");
    expect(events.at(-1)).toEqual({ kind: "page", pages: 3, rows: 4 });
  });

  it("JSON: one JSON array of every row; an empty export is []", async () => {
    const next = `${BASE}/api/analytics/v1/prs?org=acme&cursor=x`;
    const { out } = await run([jsonPage([{ prNumber: 2 }, { prNumber: 1 }], next), jsonPage([{ prNumber: 0 }])], {
      format: "json",
    });
    expect(JSON.parse(out)).toEqual([{ prNumber: 2 }, { prNumber: 1 }, { prNumber: 0 }]);
    const empty = await run([jsonPage([])], { format: "json" });
    expect(empty.out).toBe("[]\n");
  });

  it("429: waits Retry-After, then asks the same page again", async () => {
    const { out, asked, slept } = await run([
      { status: 429, headers: { "Retry-After": "7" }, body: '{"error":"Rate limit exceeded","details":[]}' },
      csv(`${HEADER}\r\nacme,api,1\r\n`),
    ]);
    expect(slept).toEqual([7000]);
    expect(asked).toHaveLength(2);
    expect(asked[1]?.url).toBe(asked[0]?.url);
    expect(out).toBe(`${HEADER}\r\nacme,api,1\r\n`);
  });

  it("gives up after 5 rate-limited answers in a row (exit 1); retries a 5xx 3 times", async () => {
    const limited = Array.from({ length: 6 }, () => ({ status: 429, headers: { "Retry-After": "1" } }));
    await expect(run(limited)).rejects.toMatchObject({ exitCode: EXIT.failed });
    const flaky = await run([{ status: 500 }, { status: 500 }, csv(`${HEADER}\r\n`)]);
    expect(flaky.slept).toEqual([1000, 2000]);
    await expect(run([{ status: 500 }, { status: 500 }, { status: 500 }, { status: 500 }])).rejects.toMatchObject({
      exitCode: EXIT.failed,
    });
  });

  it("a refusal is exit 3 with the service's sentence, details and correlation id", async () => {
    const error = await run([
      {
        status: 400,
        body: JSON.stringify({ error: "Invalid query parameters.", details: [{ path: "startDate", message: "is not a date" }] }),
        headers: { "Content-Type": "application/json", "X-Correlation-Id": "abc" },
      },
    ]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExportError);
    expect(error).toMatchObject({ exitCode: EXIT.refused });
    expect((error as Error).message).toBe(
      "The service answered 400 Invalid query parameters. (startDate: is not a date) [correlation id abc]",
    );
  });

  it("never sends the key to another origin, and never reads a page twice", async () => {
    await expect(run([csv(`${HEADER}\r\n`, "https://elsewhere.example/steal")])).rejects.toThrow(/another origin/);
    const self = `${BASE}/api/analytics/v1/prs?org=acme&cursor=a`;
    await expect(run([csv(`${HEADER}\r\n`, self), csv(`${HEADER}\r\n`, self)])).rejects.toThrow(/already read/);
  });

  it("refuses an answer of the wrong type or a header row that changes", async () => {
    await expect(run([jsonPage([])])).rejects.toThrow(/Expected text\/csv, got application\/json/);
    const next = `${BASE}/x?cursor=1`;
    await expect(run([csv(`${HEADER}\r\n`, next), csv("other\r\n")])).rejects.toThrow(/header row changed/);
  });
});

describe("npm run export: helpers", () => {
  it("nextLink finds rel=next among several links and resolves it", () => {
    const base = `${BASE}/api/analytics/v1/prs?org=a`;
    expect(nextLink('<https://x.test/p?c=1>; rel="prev", <?c=2>; rel="next"', base)).toBe(`${BASE}/api/analytics/v1/prs?c=2`);
    expect(nextLink("<https://x.test/a>; rel=next", base)).toBe("https://x.test/a");
    expect(nextLink('<https://x.test/a>; rel="prev"', base)).toBeNull();
    expect(nextLink(null, base)).toBeNull();
  });

  it("retryAfterSeconds takes seconds or an HTTP date, at least 1", () => {
    expect(retryAfterSeconds("30")).toBe(30);
    expect(retryAfterSeconds("0")).toBe(1);
    expect(retryAfterSeconds(new Date(10_000 + 5_000).toUTCString(), 10_000)).toBe(5);
    expect(retryAfterSeconds(null)).toBe(1);
  });

  it("countCsvRecords counts CRLF outside quotes only; firstPageUrl leaves out blank options", () => {
    expect(countCsvRecords('h\r\n"a\r\nb",c\r\n""""\r\n')).toBe(3);
    expect(firstPageUrl({ url: BASE, org: "acme", repo: "", format: "json", perPage: 5 })).toBe(
      `${BASE}/api/analytics/v1/prs?org=acme&perPage=5&format=json`,
    );
    // Contract section 21's lists pass through as the API takes them (the commas URL-encoded).
    expect(firstPageUrl({ url: BASE, org: "acme", repo: "api,web", author: "ada-admin" })).toBe(
      `${BASE}/api/analytics/v1/prs?org=acme&repo=api%2Cweb&author=ada-admin`,
    );
  });
});
