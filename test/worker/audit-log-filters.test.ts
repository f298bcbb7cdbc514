import { parse } from "csv-parse/sync";
import { describe, expect, it } from "vitest";
import { type AuditEntry, csvWalk, cursorParam, errorOf, keyedUser, setup, walk } from "./admin-helpers";
import { addMember, admin, env } from "./helpers";

/** `GET /api/v1/organizations/{org}/audit-log`: section 21's filters, the cursor bound to them, and `format=csv`. */

type Entry = AuditEntry;
type Page = { data: Entry[]; nextCursor: string | null };

/**
 * An organization with entries of every action and source and two actors: the setup's admin and a
 * second admin patch members (source api), the control plane adds, changes and removes one
 * (source sync, no actor), and a GitHub webhook adds one with an actor (source github).
 */
async function history() {
  const s = await setup();
  const other = await keyedUser();
  await addMember(s.org, other.id, "admin", { seat: false });
  const a = await s.member();
  const b = await s.member();
  const patchAs = (auth: Record<string, string>, id: string, body: unknown) =>
    s.patch(id, body, auth).then((res) => expect(res.status).toBe(200));
  for (let i = 0; i < 3; i++) {
    await patchAs(s.auth, a, { seat: i % 2 === 0, expectedSeat: i % 2 !== 0 });
    await patchAs(other.auth, b, { role: i % 2 === 0 ? "viewer" : "member", expectedRole: i % 2 === 0 ? "member" : "viewer" });
  }
  const gone = await s.member();
  await admin("PUT", `/internal/v1/organizations/${s.org}/members/${gone}`, {
    githubLogin: `user${gone}`,
    workEmail: `user${gone}@example.com`,
    role: "viewer",
    seat: false,
    isBot: false,
  });
  expect((await admin("DELETE", `/internal/v1/organizations/${s.org}/members/${gone}`)).status).toBe(204);
  const stub = env.ORGANIZATIONS.getByName(s.org.toLowerCase());
  const input = { githubLogin: "hooked-in", workEmail: "h@example.com", role: "member" as const, seat: false, isBot: false };
  await stub.putMember(
    { home: s.org.toLowerCase(), login: s.org },
    "7000002",
    input,
    { source: "github", correlationId: "gh-1", actor: { githubUserId: "1", githubLogin: "octo" } },
    false,
  );
  const all = (await s.auditOk("limit=100")).data as Entry[];
  return { s, other, a, b, gone, all };
}

const get = async (s: Awaited<ReturnType<typeof setup>>, query: string): Promise<Page> => (await s.auditOk(query)) as Page;

/** Every page of a filtered walk at this page size. */
const walkAll = (s: Awaited<ReturnType<typeof setup>>, filters: string, limit: number) =>
  walk<Entry>((cursor) => get(s, `${filters}&limit=${limit}${cursorParam(cursor)}`));

describe("filters", () => {
  it("each filter alone lists exactly the entries that match it, newest first", async () => {
    const { s, other, a, gone, all } = await history();
    expect(all).toHaveLength(14); // 4 members added, 6 updates; gone: added, updated, removed; hooked-in added
    const cases: [string, (e: Entry) => boolean][] = [
      ["action=member.updated", (e) => e.action === "member.updated"],
      ["action=member.removed", (e) => e.action === "member.removed"],
      ["action=member.added", (e) => e.action === "member.added"],
      ["source=api", (e) => e.source === "api"],
      ["source=sync", (e) => e.source === "sync"],
      ["source=github", (e) => e.source === "github"],
      [`actor=${s.caller.id}`, (e) => e.actor?.githubUserId === s.caller.id],
      [`actor=${other.id}`, (e) => e.actor?.githubUserId === other.id],
      ["actor=1", (e) => e.actor?.githubUserId === "1"],
      [`githubUserId=${a}`, (e) => e.githubUserId === a],
      [`githubUserId=${gone}`, (e) => e.githubUserId === gone],
    ];
    for (const [query, match] of cases) {
      const expected = all.filter(match);
      expect(expected.length, query).toBeGreaterThan(0);
      expect((await get(s, `${query}&limit=100`)).data, query).toEqual(expected);
    }
    expect((await get(s, "actor=999999999&limit=100")).data).toEqual([]);
  });

  it("since and until are inclusive bounds on at, as timestamps or UTC days", async () => {
    const { s, all } = await history();
    const times = [...new Set(all.map((e) => e.at))].sort();
    const middle = times[Math.floor(times.length / 2)] as string;
    const first = times[0] as string;
    const last = times.at(-1) as string;
    expect((await get(s, `since=${middle}&limit=100`)).data).toEqual(all.filter((e) => e.at >= middle));
    expect((await get(s, `until=${middle}&limit=100`)).data).toEqual(all.filter((e) => e.at <= middle));
    expect((await get(s, `since=${middle}&until=${middle}&limit=100`)).data).toEqual(all.filter((e) => e.at === middle));
    expect((await get(s, `since=${first}&until=${last}&limit=100`)).data).toEqual(all);
    // An offset names the same instant.
    const plusTwo = new Date(Date.parse(middle) + 2 * 3_600_000).toISOString().replace("Z", "+02:00");
    expect((await get(s, `since=${encodeURIComponent(plusTwo)}&limit=100`)).data).toEqual(all.filter((e) => e.at >= middle));
    // A day: from its first to its last millisecond (UTC).
    const day = last.slice(0, 10);
    expect((await get(s, `since=${day}&until=${day}&limit=100`)).data).toEqual(all.filter((e) => e.at.startsWith(day)));
    const after = new Date(Date.parse(last) + 1).toISOString();
    expect((await get(s, `since=${after}`)).data).toEqual([]);
  });

  it("filters combine (all must hold)", async () => {
    const { s, other, b, all } = await history();
    const middle = [...all.map((e) => e.at)].sort()[8] as string;
    const cases: [string, (e: Entry) => boolean][] = [
      ["action=member.updated&source=api", (e) => e.action === "member.updated" && e.source === "api"],
      [`action=member.updated&actor=${other.id}`, (e) => e.action === "member.updated" && e.actor?.githubUserId === other.id],
      [`githubUserId=${b}&actor=${s.caller.id}`, () => false],
      ["action=member.added&source=github", (e) => e.action === "member.added" && e.source === "github"],
      [`source=api&since=${middle}`, (e) => e.source === "api" && e.at >= middle],
      [
        `action=member.added&until=${middle}&source=sync`,
        (e) => e.action === "member.added" && e.at <= middle && e.source === "sync",
      ],
    ];
    for (const [query, match] of cases) expect((await get(s, `${query}&limit=100`)).data, query).toEqual(all.filter(match));
  });

  it("each entry carries its member's login now, null once the member left", async () => {
    const { s, a, gone, all } = await history();
    expect(all.filter((e) => e.githubUserId === a).every((e) => e.githubLogin === `user${a}`)).toBe(true);
    expect(all.filter((e) => e.githubUserId === gone).map((e) => e.githubLogin)).toEqual([null, null, null]);
    expect(all.find((e) => e.source === "github")?.githubLogin).toBe("hooked-in");
    expect(all.find((e) => e.githubUserId === s.caller.id)?.githubLogin).toBe(`user${s.caller.id}`);
  });

  it("invalid values are 400 with one detail per parameter", async () => {
    const s = await setup();
    const details = async (query: string) => {
      const res = await s.audit(query);
      expect(res.status, query).toBe(400);
      const error = await errorOf(res);
      expect(error.code).toBe("invalid_request");
      return error;
    };
    for (const [query, path] of [
      ["action=member.renamed", "action"],
      ["source=webhook", "source"],
      ["actor=ada", "actor"],
      ["actor=-1", "actor"],
      ["since=yesterday", "since"],
      ["until=2026-02-30", "until"],
      ["since=2026-11-01T10:00:00", "since"],
      ["format=xml", "format"],
    ]) {
      const error = await details(query as string);
      expect(error.message).toBe("Invalid query parameters.");
      expect(error.details.map((d) => d.path)).toEqual([path]);
    }
    const both = await details("action=x&source=y&until=z");
    expect(both.details.map((d) => d.path).sort()).toEqual(["action", "source", "until"]);
    const range = await details("since=2026-11-02&until=2026-11-01");
    expect(range.message).toBe("Invalid date range: since is after until.");
    expect(range.details).toEqual([{ path: "since", message: "must not be after until" }]);
    expect((await s.audit("action=member.updated&action=member.added")).status).toBe(400);
  });
});

describe("the cursor binds the filters", () => {
  it("a filtered walk at every page size returns each matching entry once, in order", async () => {
    const { s, other, all } = await history();
    const middle = [...all.map((e) => e.at)].sort()[5] as string;
    for (const [filters, match] of [
      ["action=member.updated", (e: Entry) => e.action === "member.updated"],
      [`source=api&actor=${other.id}`, (e: Entry) => e.source === "api" && e.actor?.githubUserId === other.id],
      [`since=${middle}&source=sync`, (e: Entry) => e.at >= middle && e.source === "sync"],
      ["", () => true],
    ] as const) {
      const expected = all.filter(match);
      for (const limit of [1, 2, 3, 7]) {
        const { items, pages } = await walkAll(s, filters, limit);
        expect(items, `${filters} limit ${limit}`).toEqual(expected);
        expect(pages).toBe(Math.max(1, Math.ceil(expected.length / limit)));
      }
    }
  });

  it("a cursor used with other filters is 400 Invalid cursor.; the same filters in another order or spelling are the same", async () => {
    const { s, other } = await history();
    const first = await get(s, `action=member.updated&actor=${other.id}&limit=1`);
    const cursor = encodeURIComponent(first.nextCursor as string);
    for (const query of [
      `action=member.updated&limit=1&cursor=${cursor}`,
      `action=member.added&actor=${other.id}&cursor=${cursor}`,
      `action=member.updated&actor=${other.id}&source=api&cursor=${cursor}`,
      `cursor=${cursor}`,
    ]) {
      const res = await s.audit(query);
      expect(res.status, query).toBe(400);
      const error = await errorOf(res);
      expect(error.message).toBe("Invalid cursor.");
      expect(error.details[0]?.path).toBe("cursor");
    }
    const same = await s.audit(`actor=${other.id}&limit=1&action=%20member.updated%20&cursor=${cursor}`);
    expect(same.status).toBe(200);
  });

  it("a cursor issued before the filters existed (a:<id>) still pages, unbound", async () => {
    const { s, all } = await history();
    const legacy = btoa(`a:${all[4]?.id}`).replace(/=+$/, "");
    expect((await get(s, `cursor=${legacy}&limit=100`)).data).toEqual(all.slice(5));
  });
});

describe("format=csv", () => {
  type State = Entry["before"];
  const seatOf = (x: State) => (x !== null && "seat" in x ? String(x.seat) : "");
  const roleOf = (x: State) => (x !== null && "role" in x ? x.role : "");
  const assignmentOf = (x: State) => (x !== null && "seatAssignment" in x ? x.seatAssignment : "");
  const columns = (e: Entry) => [
    e.id,
    e.at,
    e.action,
    e.source,
    e.actor?.githubUserId ?? "",
    e.actor?.githubLogin ?? "",
    e.githubUserId ?? "",
    e.githubLogin ?? "",
    seatOf(e.before),
    roleOf(e.before),
    assignmentOf(e.before),
    seatOf(e.after),
    roleOf(e.after),
    assignmentOf(e.after),
    e.correlationId,
    e.key?.id ?? "",
    e.key?.name ?? "",
    e.ip ?? "",
  ];
  const HEADER =
    "id,at,action,source,actorGithubUserId,actorGithubLogin,githubUserId,githubLogin,beforeSeat,beforeRole," +
    "beforeSeatAssignment,afterSeat,afterRole,afterSeatAssignment,correlationId,keyId,keyName,ip";

  it("every CSV page equals the JSON page, with Link and X-Next-Cursor to the next; the walk equals the JSON walk", async () => {
    const { s, all } = await history();
    const filters = "source=api";
    const json = await walkAll(s, filters, 4);
    expect(json.items).toEqual(all.filter((e) => e.source === "api"));
    const { rows, pages } = await csvWalk((cursor) => s.audit(`${filters}&limit=4&format=csv${cursorParam(cursor)}`), HEADER, {
      source: "api",
    });
    expect(pages).toBe(json.pages);
    expect(rows).toEqual(json.items.map(columns));
  });

  it("Accept: text/csv without format answers CSV; JSON pages carry the same headers; errors stay JSON", async () => {
    const { s, all } = await history();
    const csv = await s.audit("limit=2", { ...s.auth, Accept: "text/csv" });
    expect(csv.headers.get("Content-Type")).toBe("text/csv; charset=utf-8");
    const [, ...body] = parse(await csv.text()) as string[][];
    expect(body).toEqual(all.slice(0, 2).map(columns));
    const json = await s.audit("limit=2");
    const page = (await json.json()) as Page;
    expect(json.headers.get("X-Next-Cursor")).toBe(page.nextCursor);
    expect(json.headers.get("Link")).toContain("cursor=");
    const error = await s.audit("format=csv&action=nope");
    expect(error.status).toBe(400);
    expect(error.headers.get("Content-Type")).toContain("application/json");
    const empty = await s.audit("format=csv&actor=999999999");
    expect(await empty.text()).toBe(`${HEADER}\r\n`);
  });

  it("text a spreadsheet would run is neutralised", async () => {
    const s = await setup();
    const stub = env.ORGANIZATIONS.getByName(s.org.toLowerCase());
    const input = { githubLogin: "plain", workEmail: "p@example.com", role: "member" as const, seat: false, isBot: false };
    const origin = {
      source: "github" as const,
      correlationId: "gh-2",
      actor: { githubUserId: "2", githubLogin: "=cmd|' /C calc'!A0" },
    };
    await stub.putMember({ home: s.org.toLowerCase(), login: s.org }, "7000003", input, origin, false);
    const [, ...body] = parse(await (await s.audit("format=csv&source=github")).text()) as string[][];
    expect(body.map((r) => r[5])).toEqual(["'=cmd|' /C calc'!A0"]);
  });
});
