import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { UntilWrite } from "../../src/lib/until-write";
import { addMember, adminOk, call, createKey, createOrg, createUser, env, ev, postEventsOk } from "./helpers";

/**
 * The Durable Objects keep the answers asked on every request (the export's access, a key's
 * record) until their storage is next written (src/lib/until-write.ts). Any write must be
 * seen by the very next request, whichever code path made it: the tests write with raw SQL,
 * bypassing every method of the objects.
 */
describe("UntilWrite", () => {
  const inObject = <T>(fn: (sql: SqlStorage) => T) =>
    runInDurableObject(env.ORGANIZATIONS.getByName(`until-write-${crypto.randomUUID()}`), (_instance, state) =>
      fn(state.storage.sql),
    );

  it("computes once while nothing is written, and again after any write", async () => {
    const calls = await inObject((sql) => {
      sql.exec("CREATE TABLE scratch (x INTEGER)");
      const memo = new UntilWrite<number>(sql);
      let computed = 0;
      const read = () => memo.get("k", () => ++computed);
      const seen = [read(), read(), read()];
      sql.exec("INSERT INTO scratch VALUES (1)");
      seen.push(read(), read());
      sql.exec("UPDATE scratch SET x = 2");
      seen.push(read());
      sql.exec("DELETE FROM scratch");
      seen.push(read());
      return { seen, computed };
    });
    expect(calls.seen).toEqual([1, 1, 1, 2, 2, 3, 4]);
    expect(calls.computed).toBe(4);
  });

  it("a write that was rolled back still counts as a write", async () => {
    const computed = await runInDurableObject(
      env.ORGANIZATIONS.getByName(`until-write-${crypto.randomUUID()}`),
      (_instance, state) => {
        state.storage.sql.exec("CREATE TABLE scratch (x INTEGER)");
        const memo = new UntilWrite<number>(state.storage.sql);
        let n = 0;
        memo.get("k", () => ++n);
        expect(() =>
          state.storage.transactionSync(() => {
            state.storage.sql.exec("INSERT INTO scratch VALUES (1)");
            throw new Error("rolled back");
          }),
        ).toThrow("rolled back");
        expect(state.storage.sql.exec("SELECT count(*) AS n FROM scratch").one().n).toBe(0);
        memo.get("k", () => ++n);
        return n;
      },
    );
    expect(computed).toBe(2);
  });

  it("keeps answers per key, undefined ones included, within its budget", async () => {
    const result = await inObject((sql) => {
      const memo = new UntilWrite<string | undefined>(sql, { budget: 2 });
      const computed: string[] = [];
      const read = (key: string) =>
        memo.get(key, () => {
          computed.push(key);
          return key === "none" ? undefined : key.toUpperCase();
        });
      const seen = [read("a"), read("none"), read("a"), read("none"), read("b"), read("a")];
      return { seen, computed };
    });
    expect(result.seen).toEqual(["A", undefined, "A", undefined, "B", "A"]);
    // a and none fill the budget; b starts the memory again, so a is computed once more.
    expect(result.computed).toEqual(["a", "none", "b", "a"]);
  });

  it("weighs answers: a heavy one is answered but not kept, and never pushes the others out", async () => {
    const result = await inObject((sql) => {
      const memo = new UntilWrite<string[]>(sql, { budget: 10, weigh: (names) => names.length });
      const computed: string[] = [];
      const read = (key: string, size: number) =>
        memo.get(key, () => {
          computed.push(key);
          return Array.from({ length: size }, (_, i) => `${key}${i}`);
        });
      const seen = [
        read("small", 4),
        read("heavy", 11),
        read("heavy", 11),
        read("small", 4),
        read("medium", 6),
        read("small", 4),
      ];
      read("more", 1); // 4 + 6 + 1 > 10: the memory starts again with this one
      read("small", 4);
      return { lengths: seen.map((names) => names.length), computed };
    });
    expect(result.lengths).toEqual([4, 11, 11, 4, 6, 4]);
    expect(result.computed).toEqual(["small", "heavy", "heavy", "medium", "more", "small"]);
  });
});

describe("answers kept by the objects follow every write at once", () => {
  it("the export's access: a demotion written straight into the organization's storage", async () => {
    const org = await createOrg(undefined, { plan: "pro" });
    const user = await createUser();
    await addMember(org, user, "admin");
    const { key } = await createKey(user, "analytics");
    await adminOk("PUT", `/internal/v1/organizations/${org}/repositories/secret`, { private: true });
    await postEventsOk([
      ev.pr(org, 1, { repo: "secret", mergedAt: "2026-10-02T10:00:00Z" }),
      ev.review(org, 1, "r1", { repo: "secret" }),
    ]);
    const get = () =>
      call(`/api/analytics/v1/prs?org=${org}&repo=secret&startDate=2026-09-01&endDate=2026-10-31`, {
        headers: { Authorization: `Bearer ${key}` },
      });
    for (let i = 0; i < 2; i++) expect((await get()).status).toBe(200);
    await runInDurableObject(env.ORGANIZATIONS.getByName(org.toLowerCase()), (_instance, state) => {
      state.storage.sql.exec("UPDATE members SET role = 'member' WHERE github_user_id = ?", user);
    });
    expect((await get()).status).toBe(403);
  });

  it("a key's verdict: an owner blocked straight in the user's storage", async () => {
    const user = await createUser();
    const { key } = await createKey(user, "analytics");
    const org = await createOrg(undefined, { plan: "pro" });
    await addMember(org, user, "admin");
    const get = () => call(`/api/analytics/v1/prs?org=${org}`, { headers: { Authorization: `Bearer ${key}` } });
    for (let i = 0; i < 2; i++) expect((await get()).status).toBe(200);
    await runInDurableObject(env.USERS.getByName(user), (_instance, state) => {
      state.storage.sql.exec("UPDATE account SET blocked = 1");
    });
    expect((await get()).status).toBe(401);
  });
});
