/**
 * A D1 database (or session) that lets the event loop take a turn (a timer of 0 ms) before a
 * statement is sent and again before its answer is handed back, once `everyMs` have passed since
 * its last turn, so that the I/O other requests wait on (a request accepted, an object's answer) is
 * polled in between.
 *
 * Why: on one thread shared by many requests (an isolate deployed; under `wrangler dev` the Worker,
 * its objects and local D1 together), a request whose statements, objects and JavaScript follow one
 * another without a timer never leaves the event loop's queue empty, and the runtime polls for new
 * I/O only when it is: every request arriving meanwhile waits for the whole of it. The summary runs
 * a few statements of milliseconds each, and milliseconds of JavaScript reading each answer; turns
 * between those stages let a concurrent request's steps run (issue 31: another organization's
 * export page 59 ms behind a looping one-year summary, 8 ms alone; 28 to 34 ms with turns; a turn
 * before each statement alone left it at 56 ms, since the JavaScript after an answer ran on).
 */
export function takingTurns<T extends D1Database | D1DatabaseSession>(db: T, everyMs: number = defaultInterval): T {
  if (!Number.isFinite(everyMs) || everyMs < 0) throw new RangeError(`a turn's interval must be at least 0 ms, got ${everyMs}`);
  return wrapped(db, turnsEvery(everyMs));
}

/**
 * How often a wrapper takes its turns: when at least `everyMs` have passed since its last one. The
 * Workers clock moves only between events (an answer, a timer), so this counts the statements' own
 * time: a long statement is followed by a turn, a run of short ones (a small organization's
 * summary, a test's) takes few. A timer is not free everywhere: about 1.2 ms each in the vitest
 * pool (500 in 597 ms), where a turn on either side of every statement took the summary's property
 * test from 44-64 s to 102 s; with `TURN_EVERY_MS` 4, 60 s. Under `wrangler dev` it costs nothing
 * `bench:ab` can see.
 */
const turnsEvery = (everyMs: number): (() => Promise<void>) => {
  let last = Date.now();
  return async () => {
    if (Date.now() - last < everyMs) return;
    await nextTurn();
    last = Date.now();
  };
};

function wrapped<T extends D1Database | D1DatabaseSession>(db: T, turn: () => Promise<void>): T {
  const inner = new WeakMap<object, D1PreparedStatement>();
  const around = async <R>(send: () => Promise<R>): Promise<R> => {
    await turn();
    const answer = await send();
    await turn();
    return answer;
  };
  const wrap = (statement: D1PreparedStatement): D1PreparedStatement => {
    const proxy = new Proxy(statement, {
      get(target, property) {
        const value = Reflect.get(target, property, target);
        if (typeof value !== "function") return value;
        if (property === "bind") return (...values: unknown[]) => wrap(target.bind(...values));
        if (RUNS.has(property)) return (...args: unknown[]) => around(() => value.apply(target, args));
        return value.bind(target);
      },
    });
    inner.set(proxy, statement);
    return proxy;
  };
  return new Proxy(db, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      if (property === "prepare") return (query: string) => wrap(target.prepare(query));
      // A session of a wrapped database takes turns too, on the same clock.
      if (property === "withSession")
        return (...args: unknown[]) => wrapped((value as (...a: unknown[]) => D1DatabaseSession).apply(target, args), turn);
      if (property === "exec")
        return (query: string) => around(() => (value as (q: string) => Promise<D1ExecResult>).apply(target, [query]));
      if (property === "batch")
        return (statements: D1PreparedStatement[]) =>
          around(() => target.batch(statements.map((statement) => inner.get(statement) ?? statement)));
      return value.bind(target);
    },
  });
}

/**
 * A wrapper's turns: at most one per this many milliseconds of statements (`turnsEvery`); 0, a
 * turn on either side of every statement. At 1M, 2 and 4 kept the other organization's export
 * page at 28-35 ms behind a looping one-year summary and 8 let it wait 44-47 ms (2026-11-27);
 * measured again after the slices were kept by the isolate (2026-11-28, `--tenant-only`, one run
 * after the other): 0 gave 21.14 ms against 5.43 alone (3.89x), 4 gave 27.65 against 5.79 (4.77x).
 * A timer costs nothing measurable under `wrangler dev` and deployed, but about 1.2 ms in the
 * vitest pool, where 0 took the summary's tests from 93 s to 210 s: the tests run with 4
 * (`setDefaultTurnInterval` in `test/worker/setup.ts`).
 */
export const TURN_EVERY_MS = 0;

let defaultInterval = TURN_EVERY_MS;

/** The interval of every wrapper made without one (the summary's: `SummaryLimits.turnEveryMs` unset). For the test pool only. */
export function setDefaultTurnInterval(everyMs: number): void {
  if (!Number.isFinite(everyMs) || everyMs < 0) throw new RangeError(`a turn's interval must be at least 0 ms, got ${everyMs}`);
  defaultInterval = everyMs;
}

/** The statement methods that send it. */
const RUNS = new Set<string | symbol>(["all", "first", "raw", "run"]);

/** Resolves on a later turn of the event loop, after the I/O ready by then. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));
