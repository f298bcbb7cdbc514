import { createScheduledController, introspectWorkflow, introspectWorkflowInstance } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  beginMove,
  catchUp,
  copySome,
  type Move,
  moveInstanceId,
  readMove,
  recordMove,
  switchOver,
} from "../../src/directory/moves";
import { placementOf } from "../../src/directory/shards";
import worker from "../../src/index";
import { addMember, admin, call, createKey, createOrg, createUser, env, ev, postEventsOk, unique } from "./helpers";

/**
 * Contract section 16, "a move never stays stuck": a move whose instance is gone, ended or silent
 * is resumed or failed by the next look (GET/POST .../move), and DELETE cancels one before its
 * switch. The runtime's own restarts are in test/node/move-restart.test.ts.
 */

const other = (shard: string) => (shard === "DB" ? "ANALYTICS_2" : "DB");
const db = (shard: string) => (env as unknown as Record<string, D1Database>)[shard] as D1Database;
const countOf = async (shard: string, home: string) =>
  (await db(shard).prepare("SELECT count(*) AS n FROM pull_requests WHERE org_key = ?1").bind(home).first<{ n: number }>())?.n ??
  0;

type Row = { prNumber: number; repo: string; mergedAt: string };
type MoveView = { shard: string; move: { state: string; rowsCopied: number; lastError: string | null } | null };

/** A Pro organization with `prs` merged, reviewed pull requests, and the export's every row (one page). */
async function world(prs: number) {
  const org = await createOrg(unique("heal"));
  const user = await createUser();
  await addMember(org, user, "admin");
  const { key } = await createKey(user, "analytics");
  await postEventsOk(
    Array.from({ length: prs }, (_, i) => [
      ev.pr(org, i + 1),
      ev.review(org, i + 1, `r${i + 1}`),
      ev.finding(org, i + 1, `f${i + 1}`),
    ]).flat(),
  );
  const rows = async (): Promise<Row[]> => {
    const res = await call(`/api/analytics/v1/prs?org=${org}&startDate=2026-01-01&perPage=100`, {
      headers: { Authorization: `Bearer ${key}` },
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { data: Row[] }).data;
  };
  const home = org.toLowerCase();
  const from = (await placementOf(env, home)).shard;
  return { org, home, from, to: other(from), rows };
}

const look = async (org: string): Promise<MoveView> => {
  const res = await admin("GET", `/internal/v1/organizations/${org}/move`);
  expect(res.status).toBe(200);
  return (await res.json()) as MoveView;
};

/** A move recorded and run by hand up to a partial copy (what a crash leaves), with no Workflow instance. */
async function partialMove(w: Awaited<ReturnType<typeof world>>): Promise<Move> {
  const { move } = await recordMove(env, { home: w.home, login: w.org }, w.from, w.to, Date.now());
  await beginMove(env, move);
  await copySome(env, (await readMove(env, w.home)) as Move, 0, 2);
  expect(await countOf(w.to, w.home)).toBeGreaterThan(0);
  return (await readMove(env, w.home)) as Move;
}

/** The source as it was, the target without the organization's rows, writes to the source alone. */
async function untouched(w: Awaited<ReturnType<typeof world>>, before: Row[]) {
  expect(await placementOf(env, w.home)).toEqual({ home: w.home, shard: w.from, movingTo: null });
  expect(await countOf(w.to, w.home)).toBe(0);
  expect(await w.rows()).toEqual(before);
}

/** Ages the move's progress time by an hour (past MOVE_STALL_SECONDS), a note that names it included. */
const age = (home: string) =>
  env.DB.prepare(
    "UPDATE analytics_moves SET updated_at = updated_at - 3600000, error = replace(error, '(' || updated_at || ')', '(' || (updated_at - 3600000) || ')') WHERE home_key = ?1",
  )
    .bind(home)
    .run();

describe("a move never stays stuck (contract section 16)", () => {
  it("its instance never created or lost: the next GET creates it, and it resumes from the recorded position to done", async () => {
    const w = await world(6);
    const before = await w.rows();
    const stuck = await partialMove(w);
    await using moves = await introspectWorkflow(env.MOVES);
    // The look created its instance, which may have gone on already.
    expect(["copying", "catching_up", "switched", "done"]).toContain((await look(w.org)).move?.state);
    expect(stuck.state).toBe("copying");
    const [instance] = await moves.get();
    await instance?.waitForStatus("complete");
    expect(await look(w.org)).toMatchObject({ shard: w.to, move: { state: "done" } });
    expect(await countOf(w.from, w.home)).toBe(0);
    expect(await w.rows()).toEqual(before);
  }, 60_000);

  it("the daily Cron Trigger looks at every running move too (with sync off): a lost instance is created and finishes", async () => {
    const w = await world(3);
    const before = await w.rows();
    const stuck = await partialMove(w);
    await using instance = await introspectWorkflowInstance(env.MOVES, moveInstanceId(stuck));
    await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "17 3 * * *" }), {
      ...env,
      GITHUB_APP_ID: "",
    } as Env);
    await instance.waitForStatus("complete");
    expect(await look(w.org)).toMatchObject({ shard: w.to, move: { state: "done" } });
    expect(await w.rows()).toEqual(before);
  }, 60_000);

  it("its instance ended before the switch: the next GET fails it, source untouched, target's copy removed; a POST starts afresh", async () => {
    const w = await world(5);
    const before = await w.rows();
    const stuck = await partialMove(w);
    // Its instance errs at once (a step that keeps failing), before it did anything.
    await using ended = await introspectWorkflowInstance(env.MOVES, moveInstanceId(stuck));
    await ended.modify(async (m) => {
      await m.disableRetryDelays();
      await m.mockStepError({ name: "read" }, new Error("injected [expected-fault]"));
    });
    await env.MOVES.create({ id: moveInstanceId(stuck), params: { home: w.home, startedAt: stuck.startedAt } });
    await ended.waitForStatus("errored");
    expect((await readMove(env, w.home))?.state).toBe("copying");
    expect(await look(w.org)).toMatchObject({
      shard: w.from,
      move: { state: "failed", lastError: "its Workflow instance is errored" },
    });
    await untouched(w, before);

    await using moves = await introspectWorkflow(env.MOVES);
    const fresh = await admin("POST", `/internal/v1/organizations/${w.org}/move`, { shard: w.to });
    expect(fresh.status).toBe(202);
    const [instance] = await moves.get();
    await instance?.waitForStatus("complete");
    expect(await look(w.org)).toMatchObject({ shard: w.to, move: { state: "done" } });
    expect(await w.rows()).toEqual(before);
  }, 60_000);

  it("silent for MOVE_STALL_SECONDS: nudged (paused and resumed); silent as long again: failed, source untouched", async () => {
    const w = await world(4);
    const before = await w.rows();
    await using moves = await introspectWorkflow(env.MOVES);
    // Its first step fails three times: the instance lives, waiting out its retries' delays (5, 10, 20 s).
    await moves.modifyAll(async (m) => {
      await m.mockStepError({ name: "begin" }, new Error("injected [expected-fault]"), 3);
    });
    expect((await admin("POST", `/internal/v1/organizations/${w.org}/move`, { shard: w.to })).status).toBe(202);
    // Fresh: nothing happens.
    expect(await look(w.org)).toMatchObject({ move: { state: "copying", lastError: null } });
    await age(w.home);
    const nudged = await look(w.org);
    expect(nudged.move?.state).toBe("copying");
    expect(nudged.move?.lastError).toMatch(/^no progress: its Workflow instance was paused and resumed after 36\d\d s/);
    // Silent as long again since the nudge (no step stamped meanwhile): the nudge did not help.
    await age(w.home);
    const failed = await look(w.org);
    expect(failed.move?.state).toBe("failed");
    expect(failed.move?.lastError).toMatch(/^no progress for 36\d\d s after its Workflow instance was resumed/);
    const [first] = await moves.get();
    await first?.waitForStatus("terminated");
    await untouched(w, before);
    await moves.dispose();

    // A POST then starts a fresh move.
    await using fresh = await introspectWorkflow(env.MOVES);
    expect((await admin("POST", `/internal/v1/organizations/${w.org}/move`, { shard: w.to })).status).toBe(202);
    const [second] = await fresh.get();
    await second?.waitForStatus("complete");
    expect(await look(w.org)).toMatchObject({ shard: w.to, move: { state: "done" } });
    expect(await w.rows()).toEqual(before);
  }, 60_000);
});

describe("DELETE /internal/v1/organizations/{org}/move cancels a move before its switch", () => {
  it("copying: 200 failed with lastError cancelled, its instance terminated, source untouched", async () => {
    const w = await world(4);
    const before = await w.rows();
    await using moves = await introspectWorkflow(env.MOVES);
    await moves.modifyAll(async (m) => {
      await m.mockStepError({ name: "copy 1" }, new Error("injected [expected-fault]"), 2);
    });
    expect((await admin("POST", `/internal/v1/organizations/${w.org}/move`, { shard: w.to })).status).toBe(202);
    const res = await admin("DELETE", `/internal/v1/organizations/${w.org}/move`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      shard: w.from,
      move: { org: w.org, from: w.from, to: w.to, state: "failed", rowsCopied: expect.any(Number), lastError: "cancelled" },
    });
    const [instance] = await moves.get();
    await instance?.waitForStatus("terminated");
    await untouched(w, before);
    // Nothing runs any more: 404.
    const again = await admin("DELETE", `/internal/v1/organizations/${w.org}/move`);
    expect(again.status).toBe(404);
  }, 60_000);

  it("catching_up: 200 cancelled, the copy removed", async () => {
    const w = await world(3);
    const before = await w.rows();
    await partialMove(w);
    while (!(await copySome(env, (await readMove(env, w.home)) as Move, 0, 2))) {}
    await catchUp(env, (await readMove(env, w.home)) as Move);
    expect((await readMove(env, w.home))?.state).toBe("catching_up");
    const res = await admin("DELETE", `/internal/v1/organizations/${w.org}/move`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ shard: w.from, move: { state: "failed", lastError: "cancelled" } });
    await untouched(w, before);
    // A cancelled move never switches, whoever tries.
    await expect(switchOver(env, (await readMove(env, w.home)) as Move)).rejects.toThrow("ended before its switch");
    expect((await placementOf(env, w.home)).shard).toBe(w.from);
  }, 60_000);

  it("switched: 409 move_switched; its instance lost, the next GET restarts it and the move finishes", async () => {
    const w = await world(3);
    const before = await w.rows();
    await partialMove(w);
    while (!(await copySome(env, (await readMove(env, w.home)) as Move, 0, 2))) {}
    await catchUp(env, (await readMove(env, w.home)) as Move);
    await switchOver(env, (await readMove(env, w.home)) as Move);
    const res = await admin("DELETE", `/internal/v1/organizations/${w.org}/move`);
    expect(res.status).toBe(409);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("move_switched");
    await using moves = await introspectWorkflow(env.MOVES);
    expect(await look(w.org)).toMatchObject({ shard: w.to, move: { state: "switched" } });
    const [instance] = await moves.get();
    await instance?.waitForStatus("complete");
    expect(await look(w.org)).toMatchObject({ shard: w.to, move: { state: "done" } });
    expect(await countOf(w.from, w.home)).toBe(0);
    expect(await w.rows()).toEqual(before);
  }, 60_000);

  it("none ran, or the last one ended: 404", async () => {
    const w = await world(1);
    expect((await admin("DELETE", `/internal/v1/organizations/${w.org}/move`)).status).toBe(404);
    expect((await admin("DELETE", `/internal/v1/organizations/${unique("nobody")}/move`)).status).toBe(404);
  });
});
