import { describe, expect, it } from "vitest";
import { appCall, signIn } from "./app-helpers";
import { addMember, adminOk, call, createKey, createOrg, createUser, ev, fetchWithEnv, postEventsOk, unique } from "./helpers";
import { callTool, listTools, refusalOf } from "./mcp-helpers";
import { exportRows } from "./summary-reference";

/**
 * Contract section 21: `repo` takes a list of repositories and `author` a list of logins, on the
 * export, the summary, the web app's download and summaries, and the MCP tools. The rows of a list
 * are the union of its names' rows; the rules of section 3 apply to each name.
 */

type Row = { repo: string; prNumber: number; author: string; mergedAt: string };
type Page = { data: Row[]; nextCursor: string | null };
type ErrorBody = { error: string; details?: { path: string; message: string }[] };

const WINDOW = "startDate=2026-10-01&endDate=2026-10-31";
const REPOS = ["api", "web", "cli", "vault"];
const AUTHORS = ["alice", "Bob", "carol"];

/**
 * A Pro organization: `api`, `web`, `cli` public, `vault` private (the member is no collaborator),
 * `ghost` known only from reviewer events; 24 pull requests merged in October across them (two in
 * `ghost`), by three authors. An admin and a member, each with an analytics key.
 */
async function setup() {
  const org = await createOrg(unique("lists"), { plan: "pro" });
  const [admin, member] = [await createUser(), await createUser()];
  await addMember(org, admin, "admin");
  await addMember(org, member, "member");
  for (const repo of REPOS)
    await adminOk("PUT", `/internal/v1/organizations/${org}/repositories/${repo}`, { private: repo === "vault" });
  const events = Array.from({ length: 24 }, (_, i) => {
    const n = i + 1;
    const repo = i < 2 ? "ghost" : (REPOS[i % REPOS.length] as string);
    const at = `2026-10-${String(1 + (i % 28)).padStart(2, "0")}T${String(10 + (i % 7)).padStart(2, "0")}:00:00Z`;
    return [
      ev.pr(org, n, { repo, author: AUTHORS[i % AUTHORS.length], createdAt: "2026-09-20T08:00:00Z", mergedAt: at }),
      ev.review(org, n, `r${n}`, { repo, completedAt: at }),
    ];
  }).flat();
  await postEventsOk(events);
  const keys = { admin: (await createKey(admin, "analytics")).key, member: (await createKey(member, "analytics")).key };
  const get = (path: string, as: keyof typeof keys = "admin") => call(path, { headers: { Authorization: `Bearer ${keys[as]}` } });
  const walk = (query: string, perPage: number, as: keyof typeof keys = "admin"): Promise<Row[]> =>
    exportRows<Row>(
      async (path) => {
        const res = await get(path, as);
        expect(res.status).toBe(200);
        return res.json();
      },
      `org=${org}&${WINDOW}&${query}`,
      { perPage, maxPages: 100 },
    );
  return { org, admin, member, keys, get, walk };
}

const key = (row: Row) => `${row.repo}#${row.prNumber}`;

describe("a list of repositories and authors: the union of its names' rows", () => {
  it("each row once, in the export's order; any case, spaces and repeated names", async () => {
    const s = await setup();
    const all = await s.walk("", 100);
    expect(all).toHaveLength(24);
    const only = (repos: string[] | null, authors: string[] | null) =>
      all.filter(
        (r) =>
          (repos === null || repos.includes(r.repo.toLowerCase())) &&
          (authors === null || authors.includes(r.author.toLowerCase())),
      );
    const cases: [string, string[] | null, string[] | null][] = [
      ["repo=api", ["api"], null],
      ["repo=API, Web", ["api", "web"], null],
      ["repo=web,api,WEB,api", ["api", "web"], null],
      ["repo=api,web,cli,ghost", ["api", "web", "cli", "ghost"], null],
      ["author=bob", null, ["bob"]],
      ["author=ALICE,%20carol%20", null, ["alice", "carol"]],
      ["repo=api,web&author=Bob,alice,bob", ["api", "web"], ["alice", "bob"]],
      ["author=nobody", null, ["nobody"]],
    ];
    for (const [query, repos, authors] of cases) {
      const expected = only(repos, authors);
      for (const perPage of [1, 3, 100]) expect((await s.walk(query, perPage)).map(key)).toEqual(expected.map(key));
    }
    // A single name means what it always meant.
    expect(only(["api"], null).length).toBeGreaterThan(0);
  });

  it("the summary counts exactly the export's rows of the same lists", async () => {
    const s = await setup();
    const query = "repo=api,Web,ghost&author=alice,bob";
    const rows = await s.walk(query, 100);
    const res = await s.get(`/api/analytics/v1/summary?org=${s.org}&${WINDOW}&${query}&groupBy=repo`);
    expect(res.status).toBe(200);
    const summary = (await res.json()) as { groups: { key: string; pullRequests: number }[]; totals: { pullRequests: number } };
    expect(summary.totals.pullRequests).toBe(rows.length);
    const counts = new Map<string, number>();
    for (const row of rows) counts.set(row.repo, (counts.get(row.repo) ?? 0) + 1);
    expect(Object.fromEntries(summary.groups.map((g) => [g.key, g.pullRequests]))).toEqual(Object.fromEntries(counts));
  });
});

describe("parameters: at most 20 names, at most 255 characters, no empty name (400 naming the parameter)", () => {
  const detailsOf = async (res: Response) => {
    expect(res.status).toBe(400);
    return ((await res.json()) as ErrorBody).details;
  };

  it.each(["repo", "author"])("%s: 21 names, 256 characters, empty names", async (name) => {
    const s = await setup();
    const what = name === "repo" ? "repositories" : "authors";
    for (const path of ["/api/analytics/v1/prs", "/api/analytics/v1/summary"]) {
      const get = (value: string) =>
        s.get(`${path}?org=${s.org}&${WINDOW}&groupBy=week&${name}=${encodeURIComponent(value)}`).then(detailsOf);
      const names = (n: number) => Array.from({ length: n }, (_, i) => `n${i}`).join(",");
      expect(await get(names(21))).toEqual([{ path: name, message: `must list at most 20 ${what}` }]);
      // The same name 21 times is 21 names as written.
      expect(await get(Array(21).fill("api").join(","))).toEqual([{ path: name, message: `must list at most 20 ${what}` }]);
      expect(await get(`${"a".repeat(250)},bcdef`)).toEqual([{ path: name, message: "must be at most 255 characters" }]);
      for (const empty of ["a,,b", "a,", ",a", "a, ,b", ","]) {
        expect(await get(empty)).toEqual([
          { path: name, message: "must not have an empty name (two commas in a row, or one at either end)" },
        ]);
      }
    }
  });

  it("20 names and 255 characters are accepted (trimmed first)", async () => {
    const s = await setup();
    const twenty = Array.from({ length: 20 }, (_, i) => `login-${i}`).join(",");
    const res = await s.get(`/api/analytics/v1/prs?org=${s.org}&${WINDOW}&author=${encodeURIComponent(`  ${twenty}  `)}`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as Page).data).toEqual([]);
    const long = `${"x".repeat(249)},alice`;
    expect(long).toHaveLength(255);
    const ok = await s.get(`/api/analytics/v1/prs?org=${s.org}&${WINDOW}&author=${encodeURIComponent(` ${long} `)}`);
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as Page).data.every((r) => r.author === "alice")).toBe(true);
  });
});

describe("section 3's checks for each name of a list (403 repo_access_denied)", () => {
  it("a member: one hidden or missing repository refuses the whole list", async () => {
    const s = await setup();
    for (const repo of ["api,vault", "vault,api,web", "api,nope", "API,Web,gone"]) {
      for (const path of ["/api/analytics/v1/prs", "/api/analytics/v1/summary"]) {
        const res = await s.get(`${path}?org=${s.org}&${WINDOW}&groupBy=repo&repo=${repo}`, "member");
        expect(res.status).toBe(403);
        expect(((await res.json()) as ErrorBody).error).toBe("You do not have access to this repository, or it does not exist.");
      }
    }
    expect((await s.get(`/api/analytics/v1/prs?org=${s.org}&${WINDOW}&repo=api,web`, "member")).status).toBe(200);
  });

  it("an admin: each unregistered name must be known from reviewer events, even when the others have rows", async () => {
    const s = await setup();
    const status = async (repo: string, path = "/api/analytics/v1/prs") =>
      (await s.get(`${path}?org=${s.org}&${WINDOW}&groupBy=repo&repo=${repo}`)).status;
    expect(await status("ghost")).toBe(200);
    expect(await status("api,ghost,vault")).toBe(200);
    for (const path of ["/api/analytics/v1/prs", "/api/analytics/v1/summary"]) {
      expect(await status("api,nope", path)).toBe(403);
      expect(await status("ghost,nope", path)).toBe(403);
      expect(await status("nope", path)).toBe(403);
    }
    // Known from events but with no row in this window: still there.
    const empty = await s.get(`/api/analytics/v1/prs?org=${s.org}&startDate=2025-01-01&endDate=2025-01-31&repo=ghost,api`);
    expect(empty.status).toBe(200);
    expect(((await empty.json()) as Page).data).toEqual([]);
  });
});

describe("the cursor binds the lists like the other filters (section 3)", () => {
  it("a cursor walked with one list and used with another answers that list's rows after its position, never a 500", async () => {
    const s = await setup();
    const first = await s.get(`/api/analytics/v1/prs?org=${s.org}&${WINDOW}&repo=api,web&perPage=3`);
    const page = (await first.json()) as Page;
    expect(page.nextCursor).not.toBeNull();
    const cursor = page.nextCursor as string;
    const [at, id] = cursor.split("|") as [string, string];
    const cli = await s.walk("repo=cli,ghost&author=alice,bob", 100);
    for (const other of ["repo=cli,ghost&author=alice,bob", "repo=cli", "author=carol", ""]) {
      const res = await s.get(
        `/api/analytics/v1/prs?org=${s.org}&${WINDOW}&${other}&perPage=100&cursor=${encodeURIComponent(cursor)}`,
      );
      expect(res.status).toBe(200);
      const rows = ((await res.json()) as Page).data;
      // Strictly after the position: an older merge (ids follow first arrival here, as merge times do).
      for (const row of rows) expect(Date.parse(row.mergedAt)).toBeLessThanOrEqual(Date.parse(at));
      expect(Number(id)).toBeGreaterThan(0);
      if (other.startsWith("repo=cli,ghost")) {
        expect(rows.map(key)).toEqual(cli.filter((r) => Date.parse(r.mergedAt) < Date.parse(at)).map(key));
      }
    }
  });
});

describe("the page read alongside the access check is never one read for other lists", () => {
  it("another list of repositories or authors gets its own rows, the same list the early read", async () => {
    const s = await setup();
    const get = async (query: string) => {
      const res = await fetchWithEnv(
        new Request(`https://service.test/api/analytics/v1/prs?org=${s.org}&${WINDOW}&${query}`, {
          headers: { Authorization: `Bearer ${s.keys.admin}` },
        }),
        { DEBUG_ROWS_READ: "true" },
      );
      expect(res.status).toBe(200);
      const rows = ((await res.json()) as Page).data;
      return { early: res.headers.get("X-Debug-Early-Page"), rows: rows.map(key) };
    };
    const expected = async (query: string) => (await s.walk(query, 100)).map(key);
    const apiWeb = await get("repo=api,web");
    expect(apiWeb.rows).toEqual(await expected("repo=api,web"));
    // The same list in another order and case is the same guess, and the early read is used.
    expect(await get("repo=WEB,api")).toEqual({ early: "used", rows: apiWeb.rows });
    // Another list: another guess (first time: none read early), never the rows of the first.
    expect(await get("repo=api,cli")).toEqual({ early: "none", rows: await expected("repo=api,cli") });
    // Another author list under the same repositories: the access is the same, the statement is the request's.
    const bob = await get("repo=api,web&author=bob");
    expect(bob.rows).toEqual(await expected("repo=api,web&author=bob"));
    expect(bob.early).toBe("used");
    expect(await get("repo=api,web&author=carol")).toEqual({ early: "used", rows: await expected("repo=api,web&author=carol") });
  });
});

describe("the web app's routes take the same lists", () => {
  it("the download is the export's walk with the lists; its file name counts them; the summaries equal the summary", async () => {
    const s = await setup();
    const session = await signIn(s.admin);
    const query = "repo=api,web&author=alice,bob";
    const res = await appCall(`/app/api/analytics/prs.csv?org=${s.org}&${WINDOW}&${query}`, session);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Disposition")).toBe(
      `attachment; filename="${s.org}-2-repositories-2-authors-pull-requests-2026-10-01-2026-10-31.csv"`,
    );
    const csv = await res.text();
    const exported = await s.get(`/api/analytics/v1/prs?org=${s.org}&${WINDOW}&${query}&format=csv`);
    expect(csv).toBe(await exported.text());
    const one = await appCall(`/app/api/analytics/prs.csv?org=${s.org}&${WINDOW}&repo=web&author=Bob`, session);
    expect(one.headers.get("Content-Disposition")).toBe(
      `attachment; filename="${s.org}-web-by-Bob-pull-requests-2026-10-01-2026-10-31.csv"`,
    );

    const summaries = await appCall(
      `/app/api/analytics/summaries?org=${s.org}&${WINDOW}&${query}&groupBy=week,repo,author`,
      session,
    );
    expect(summaries.status).toBe(200);
    const { summaries: list } = (await summaries.json()) as { summaries: unknown[] };
    for (const [i, groupBy] of ["week", "repo", "author"].entries()) {
      const single = await s.get(`/api/analytics/v1/summary?org=${s.org}&${WINDOW}&${query}&groupBy=${groupBy}`);
      expect(list[i]).toEqual(await single.json());
    }
    const refused = await appCall(`/app/api/analytics/summaries?org=${s.org}&${WINDOW}&repo=api,&groupBy=week`, session);
    expect(refused.status).toBe(400);
    // The app's export and summary are the public routes for the session's user.
    for (const path of ["/app/api/analytics/prs", "/app/api/analytics/summary"]) {
      const app = await appCall(`${path}?org=${s.org}&${WINDOW}&${query}&groupBy=author`, session);
      expect(app.status).toBe(200);
      const pub = await s.get(
        `${path.replace("/app/api/analytics/", "/api/analytics/v1/")}?org=${s.org}&${WINDOW}&${query}&groupBy=author`,
      );
      expect(await app.json()).toEqual(await pub.json());
    }
  });
});

describe("the MCP tools take the lists, as the REST string or an array", () => {
  it("list_pull_request_analytics and summarize_pull_request_analytics answer the REST bodies", async () => {
    const s = await setup();
    const tools = await listTools(s.keys.admin);
    for (const name of ["list_pull_request_analytics", "summarize_pull_request_analytics"]) {
      const properties = tools.get(name)?.inputSchema.properties as Record<string, { anyOf?: { type: string }[] }>;
      for (const list of ["repo", "author"]) expect(properties[list]?.anyOf?.map((s) => s.type)).toEqual(["string", "array"]);
    }
    const rest = async (path: string) => (await s.get(path)).json();
    const expected = await rest(`/api/analytics/v1/prs?org=${s.org}&${WINDOW}&repo=api,web&author=alice,bob`);
    for (const args of [
      { repo: "api,web", author: "alice,bob" },
      { repo: ["api", "web"], author: ["alice", "bob"] },
      { repo: ["API", "web", "api"], author: "Alice, bob" },
    ]) {
      const { result } = await callTool(s.keys.admin, "list_pull_request_analytics", {
        org: s.org,
        startDate: "2026-10-01",
        endDate: "2026-10-31",
        ...args,
      });
      expect(result.isError).toBeUndefined();
      expect(result.structuredContent).toEqual(expected);
    }
    const summary = await rest(`/api/analytics/v1/summary?org=${s.org}&${WINDOW}&repo=api,web&author=carol&groupBy=author`);
    const { result } = await callTool(s.keys.admin, "summarize_pull_request_analytics", {
      org: s.org,
      startDate: "2026-10-01",
      endDate: "2026-10-31",
      repo: ["api", "web"],
      author: ["carol"],
      groupBy: "author",
    });
    expect(result.structuredContent).toEqual(summary);
    // The same refusals: an empty name, 21 names, a repository the member may not read.
    const refusals: [string, Record<string, unknown>, string][] = [
      [s.keys.admin, { repo: ["api", ""] }, "invalid_request"],
      [s.keys.admin, { author: Array.from({ length: 21 }, (_, i) => `a${i}`) }, "invalid_request"],
      [s.keys.member, { repo: ["api", "vault"] }, "repo_access_denied"],
    ];
    for (const [k, args, code] of refusals) {
      const { result: refused } = await callTool(k, "list_pull_request_analytics", { org: s.org, ...args });
      expect(refusalOf(refused).code).toBe(code);
    }
    // What the input schema refuses is refused, naming the argument, never read as another filter:
    // an empty array is not "no filter", a number or an object is not a name, and an array's item
    // is one name (a comma inside it would split it in two).
    const malformed: [string, unknown][] = [
      ["author", []],
      ["repo", []],
      ["repo", 5],
      ["author", true],
      ["repo", { a: 1 }],
      ["repo", [null]],
      ["repo", ["api", ["web"]]],
      ["repo", ["api,web"]],
      ["author", ["  "]],
    ];
    for (const [name, value] of malformed) {
      for (const tool of ["list_pull_request_analytics", "summarize_pull_request_analytics"]) {
        const { result: refused } = await callTool(s.keys.admin, tool, { org: s.org, groupBy: "repo", [name]: value });
        const error = refusalOf(refused);
        expect([tool, name, value, error.code]).toEqual([tool, name, value, "invalid_request"]);
        expect(error.details).toEqual([{ path: name, message: expect.stringMatching(/name/) }]);
      }
    }
  });
});
