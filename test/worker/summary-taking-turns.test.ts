import { describe, expect, it } from "vitest";
import { type GroupingsQuery, SUMMARY_LIMITS, SummaryPlans, summarizeGroupings } from "../../src/storage/analytics-summary";
import { takingTurns } from "../../src/storage/taking-turns";
import { addMember, adminOk, createOrg, createUser, postEventsOk, seededRandom, shardDb, unique } from "./helpers";
import { eventsOf, type Pr } from "./summary-attack-data";

/**
 * A summary takes turns with the other requests on its thread (`storage/taking-turns.ts`): each of
 * its statements is sent on a later turn of the event loop than the answer before it, so I/O that
 * arrived meanwhile (another request, an object's answer) runs in between instead of after the whole
 * summary.
 */

const HOUR = 3_600_000;
const JAN = Date.parse("2026-01-01T00:00:00Z");
const END = Date.parse("2026-04-30T23:59:59.999Z");

/**
 * A real D1 database (or session) that records, for each statement, batch or exec sent, whether a
 * timer of 0 ms set when the previous one was answered had fired by then (`turned`: the sender let
 * the event loop turn in between), and whether one set by `mark()` had (`sinceMark`: the caller
 * marks just before calling a method of a wrapper over this one). Its sessions record into the same
 * lists.
 */
function recording<T extends D1Database | D1DatabaseSession>(db: T) {
  const sends: { what: string; turned: boolean; sinceMark: boolean }[] = [];
  let turned = true;
  let marked = true;
  const timer = (set: () => void) => setTimeout(set, 0);
  const answered = () => {
    turned = false;
    timer(() => {
      turned = true;
    });
  };
  const mark = () => {
    marked = false;
    timer(() => {
      marked = true;
    });
  };
  const sent = async <R>(what: string, send: () => Promise<R>): Promise<R> => {
    sends.push({ what: what.slice(0, 60), turned, sinceMark: marked });
    try {
      return await send();
    } finally {
      answered();
    }
  };
  const inner = new WeakMap<object, D1PreparedStatement>();
  const wrap = (statement: D1PreparedStatement, query: string): D1PreparedStatement => {
    const wrapped = new Proxy(statement, {
      get(target, property) {
        const value = Reflect.get(target, property, target);
        if (typeof value !== "function") return value;
        if (property === "bind") return (...values: unknown[]) => wrap(target.bind(...values), query);
        if (["all", "first", "raw", "run"].includes(String(property)))
          return (...args: unknown[]) => sent(query, () => value.apply(target, args));
        return value.bind(target);
      },
    });
    inner.set(wrapped, statement);
    return wrapped;
  };
  const over = <D extends D1Database | D1DatabaseSession>(handle: D): D =>
    new Proxy(handle, {
      get(target, property) {
        const value = Reflect.get(target, property, target);
        if (typeof value !== "function") return value;
        if (property === "prepare") return (query: string) => wrap(target.prepare(query), query);
        if (property === "batch")
          return (statements: D1PreparedStatement[]) =>
            sent(`batch of ${statements.length}`, () => target.batch(statements.map((s) => inner.get(s) ?? s)));
        if (property === "exec") return (query: string) => sent(query, () => value.apply(target, [query]));
        if (property === "withSession") return (...args: unknown[]) => over(value.apply(target, args) as D1DatabaseSession);
        return value.bind(target);
      },
    });
  return { db: over(db), sends, mark, turnedSinceAnswer: () => turned };
}

async function orgWithPullRequests(seed: number): Promise<string> {
  const org = await createOrg(unique("turns"), { plan: "pro", installedAt: "2024-01-01T00:00:00Z" });
  await addMember(org, await createUser(), "admin");
  await adminOk("PUT", `/internal/v1/organizations/${org}/repositories/api`, { private: false });
  const random = seededRandom(seed);
  const prs: Pr[] = [];
  for (let t = JAN + 2 * HOUR, n = 1; t < END - 6 * HOUR; t += (6 + Math.floor(random() * 30)) * HOUR, n++)
    prs.push({
      repo: "api",
      n,
      author: ["alice", "bob", "carol"][n % 3] as string,
      created: t - 3 * HOUR,
      merged: t,
      reviews: [t - HOUR],
      findings: random() < 0.3 ? [{ at: t - HOUR, fixed: random() < 0.5 }] : [],
    });
  await postEventsOk(eventsOf(org, prs));
  return org;
}

const query = (org: string, groupBys: GroupingsQuery["groupBys"]): GroupingsQuery => ({
  orgKey: org,
  repoKeys: null,
  authorKeys: null,
  accessibleRepoKeys: null,
  start: JAN,
  end: END,
  groupBys,
});

describe("a summary's statements take turns with other requests", () => {
  it("sends each statement on a later turn than the previous answer, with blocks built, read in slices, by month and by week", async () => {
    const org = await orgWithPullRequests(31);
    const db = await shardDb(org);
    // A window longer than a slice of blocks, so the blocks are read in several statements before
    // the walk; by author its months come from month blocks per group, by week from day blocks.
    const limits = {
      ...SUMMARY_LIMITS,
      blockSliceDays: 30,
      countSliceDays: 30,
      countWholeDays: 30,
      bucketsFrom: 0,
      bucketsPerBlock: 0,
      turnEveryMs: 0,
    };
    for (const groupBys of [["author"], ["week"], ["week", "repo", "author"]] as GroupingsQuery["groupBys"][]) {
      // Twice: the first builds the missing blocks (batches), the second reads them (and the
      // slices); the second on a D1 session, as the routes read.
      for (const [round, handle] of [
        ["builds", db],
        ["reads", db.withSession("first-unconstrained")],
      ] as const) {
        const { db: recorded, sends } = recording(handle);
        const figures = await summarizeGroupings(recorded, query(org, groupBys), limits);
        expect(figures.groupings[0]?.totals.pullRequests, `${groupBys} ${round}`).toBeGreaterThan(50);
        expect(sends.length, `${groupBys} ${round}: statements sent`).toBeGreaterThanOrEqual(round === "builds" ? 4 : 3);
        expect(
          sends.filter((s) => !s.turned),
          `${groupBys} ${round}: statements sent without a turn after the answer before`,
        ).toEqual([]);
      }
    }
  });

  it("takes a turn before sending each statement and before handing its answer back: every method, batch, exec, and a session of the wrapped database", async () => {
    const org = await orgWithPullRequests(11);
    const seen = recording(await shardDb(org));
    const wrapped = takingTurns(seen.db, 0);
    const session = wrapped.withSession("first-unconstrained");
    const runs: [string, () => Promise<unknown>][] = [
      ["first", () => wrapped.prepare("SELECT 1 AS one").first("one")],
      ["all", () => wrapped.prepare("SELECT 1 AS one").all()],
      ["raw", () => wrapped.prepare("SELECT 1 AS one").raw()],
      ["run", () => wrapped.prepare("SELECT 1 AS one").run()],
      ["batch", () => wrapped.batch([wrapped.prepare("SELECT 1 AS one"), wrapped.prepare("SELECT 2 AS two")])],
      ["exec", () => wrapped.exec("SELECT 1")],
      ["session first", () => session.prepare("SELECT 1 AS one").first("one")],
      ["session batch", () => session.batch([session.prepare("SELECT 1 AS one")])],
    ];
    for (const [name, run] of runs) {
      const before = seen.sends.length;
      // A timer set as the method is called has fired by the time the statement is sent...
      seen.mark();
      await run();
      expect(
        seen.sends.slice(before).map((s) => s.sinceMark),
        `${name}: a turn before sending`,
      ).toEqual([true]);
      // ...and the one the recorder set as its answer arrived, by the time the caller has it.
      expect(seen.turnedSinceAnswer(), `${name}: a turn before handing the answer back`).toBe(true);
    }
  });

  it("a window walked for its few pull requests (SummaryPlans) takes no turn: one short statement, sent at once", async () => {
    const org = await orgWithPullRequests(41);
    const q = query(org, ["week"]);
    const limits = { ...SUMMARY_LIMITS, turnEveryMs: 0 };
    const answer = await summarizeGroupings(await shardDb(org), q, limits);
    for (const candidates of [10, null]) {
      const plans = new SummaryPlans();
      if (candidates !== null) plans.record(q, candidates);
      expect(plans.walks(q)).toBe(candidates !== null);
      const seen = recording(await shardDb(org));
      // A timer set just before the summary has fired by its first statement only if it took a turn.
      seen.mark();
      const figures = await summarizeGroupings(seen.db, q, limits, { plans });
      expect(seen.sends[0]?.sinceMark, `walked: ${candidates !== null}`).toBe(candidates === null);
      expect(figures.groupings).toEqual(answer.groupings);
    }
  });

  it("takes no turn until its interval has passed since the last: a summary of short statements takes few", async () => {
    const org = await orgWithPullRequests(13);
    const seen = recording(await shardDb(org));
    const wrapped = takingTurns(seen.db, 60_000);
    for (const run of [
      () => wrapped.prepare("SELECT 1 AS one").first("one"),
      () => wrapped.batch([wrapped.prepare("SELECT 1 AS one")]),
      () => wrapped.withSession("first-unconstrained").prepare("SELECT 1 AS one").all(),
    ]) {
      seen.mark();
      await run();
      expect(seen.sends.at(-1)?.sinceMark).toBe(false);
      expect(seen.turnedSinceAnswer()).toBe(false);
    }
    expect(() => takingTurns(seen.db, -1)).toThrow(RangeError);
  });

  it("the wrapper keeps every statement's answer and lets batches take its statements", async () => {
    const org = await orgWithPullRequests(7);
    const db = await shardDb(org);
    const wrapped = takingTurns(db, 0);
    const count = "SELECT COUNT(*) AS n FROM pull_requests WHERE org_key = ?1";
    const direct = await db.prepare(count).bind(org).first<number>("n");
    expect(direct).toBeGreaterThan(50);
    expect(await wrapped.prepare(count).bind(org).first<number>("n")).toBe(direct);
    expect((await wrapped.prepare(count).bind(org).all<{ n: number }>()).results).toEqual([{ n: direct }]);
    expect(await wrapped.prepare(count).bind(org).raw()).toEqual([[direct]]);
    const [a, b] = await wrapped.batch([wrapped.prepare(count).bind(org), wrapped.prepare("SELECT ?1 AS x").bind(5)]);
    expect(a?.results).toEqual([{ n: direct }]);
    expect(b?.results).toEqual([{ x: 5 }]);
    // A session of the wrapped database is wrapped too, and answers the same.
    const session = wrapped.withSession("first-unconstrained");
    expect(await session.prepare(count).bind(org).first<number>("n")).toBe(direct);
    expect((await wrapped.exec("SELECT 1")).count).toBe(1);
  });
});
