import { describe, expect, it } from "vitest";
import { addMember, adminOk, createKey, createOrg, createUser, ev, fetchWithEnv, postEventsOk, unique } from "./helpers";

/**
 * The export reads its page alongside the access check when the isolate can guess the access
 * (src/analytics/early-page.ts). The guess must only ever save time: whatever changed between two
 * requests (access, data), the answer is the one the sequential path would give.
 * `X-Debug-Early-Page` (enabled with DEBUG_ROWS_READ, as in the benchmarks) says which path ran.
 */
type Page = { data: { repo: string; prNumber: number }[]; nextCursor: string | null };

const WINDOW = "startDate=2026-09-01&endDate=2026-10-31";

async function setup(role: "admin" | "member", vars: Record<string, string> = {}) {
  const org = await createOrg(unique("early"), { plan: "pro" });
  const user = await createUser();
  await addMember(org, user, role);
  const { key } = await createKey(user, "analytics");
  await adminOk("PUT", `/internal/v1/organizations/${org}/repositories/api`, { private: false });
  await adminOk("PUT", `/internal/v1/organizations/${org}/repositories/secret`, { private: true });
  await postEventsOk([
    ev.pr(org, 1, { repo: "api", mergedAt: "2026-10-02T10:00:00Z" }),
    ev.review(org, 1, "r1", { repo: "api" }),
    ev.pr(org, 2, { repo: "secret", mergedAt: "2026-10-03T10:00:00Z" }),
    ev.review(org, 2, "r2", { repo: "secret" }),
  ]);
  const get = async (query = WINDOW, extra: Record<string, string> = {}) => {
    const res = await fetchWithEnv(
      new Request(`https://service.test/api/analytics/v1/prs?org=${org}&${query}`, {
        headers: { Authorization: `Bearer ${key}` },
      }),
      { DEBUG_ROWS_READ: "true", ...vars, ...extra },
    );
    return { res, early: res.headers.get("X-Debug-Early-Page") };
  };
  const page = async (query = WINDOW) => {
    const { res, early } = await get(query);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Page;
    return { early, rows: body.data.map((r) => `${r.repo}#${r.prNumber}`) };
  };
  return { org, user, get, page };
}

describe("the page read alongside the access check", () => {
  it("a caller asking again gets the page read early, with the data as it is now", async () => {
    const s = await setup("admin");
    expect(await s.page()).toEqual({ early: "none", rows: ["secret#2", "api#1"] });
    expect(await s.page()).toEqual({ early: "used", rows: ["secret#2", "api#1"] });
    // New data between the two requests: the early read happens during the request, so it sees it.
    await postEventsOk([ev.pr(s.org, 3, { mergedAt: "2026-10-04T10:00:00Z" }), ev.review(s.org, 3, "r3")]);
    expect(await s.page()).toEqual({ early: "used", rows: ["api#3", "secret#2", "api#1"] });
    // Another query of the same caller: the guess is about access, the statement is built from the
    // request as it is, so a new page size or window still reads early.
    expect(await s.page(`${WINDOW}&perPage=1`)).toEqual({ early: "used", rows: ["api#3"] });
  });

  it("a member who gains or loses a private repository gets the sequential answer, never the guess", async () => {
    const s = await setup("member");
    expect(await s.page()).toEqual({ early: "none", rows: ["api#1"] });
    await adminOk("PUT", `/internal/v1/organizations/${s.org}/repositories/secret`, {
      private: true,
      collaborators: [s.user],
    });
    expect(await s.page()).toEqual({ early: "stale", rows: ["secret#2", "api#1"] });
    await adminOk("PUT", `/internal/v1/organizations/${s.org}/repositories/secret`, { private: true, collaborators: [] });
    expect(await s.page()).toEqual({ early: "stale", rows: ["api#1"] });
    expect(await s.page()).toEqual({ early: "used", rows: ["api#1"] });
  });

  it("an admin demoted to member no longer sees private rows on the next request", async () => {
    const s = await setup("admin");
    expect((await s.page()).rows).toEqual(["secret#2", "api#1"]);
    await addMember(s.org, s.user, "member");
    expect(await s.page()).toEqual({ early: "stale", rows: ["api#1"] });
  });

  it("a refusal never shows what the early read found", async () => {
    const s = await setup("admin");
    expect((await s.page()).rows).toEqual(["secret#2", "api#1"]);
    await adminOk("DELETE", `/internal/v1/organizations/${s.org}/members/${s.user}`);
    const { res, early } = await s.get();
    expect(res.status).toBe(403);
    expect(early).toBeNull();
    expect(await res.json()).toMatchObject({ error: "You do not have access to this organization." });
  });

  it("a refused caller (429) loses the guess: the next request reads after the access check again", async () => {
    const s = await setup("admin", { RATE_LIMIT_ANALYTICS: "2", RATE_LIMIT_WINDOW_SECONDS: "60" });
    expect((await s.page()).early).toBe("none");
    expect((await s.page()).early).toBe("used");
    const refused = await s.get();
    expect(refused.res.status).toBe(429);
    // A larger quota lets the caller in again; the guess was dropped with the refusal.
    expect((await s.get(WINDOW, { RATE_LIMIT_ANALYTICS: "10" })).early).toBe("none");
    expect((await s.get(WINDOW, { RATE_LIMIT_ANALYTICS: "10" })).early).toBe("used");
  });
});
