/**
 * A D1 database (or session) whose every statement lets the event loop take a turn (a timer of 0
 * ms) before it is sent and again before its answer is handed back, so that the I/O other
 * requests wait on (a request accepted, an object's answer) is polled in between.
 *
 * Why: on one thread shared by many requests (an isolate deployed; under `wrangler dev` the Worker,
 * its objects and local D1 together), a request whose statements, objects and JavaScript follow one
 * another without a timer never leaves the event loop's queue empty, and the runtime polls for new
 * I/O only when it is: every request arriving meanwhile waits for the whole of it. The summary runs
 * a few statements of milliseconds each, and milliseconds of JavaScript reading each answer; a turn
 * on either side of each statement lets a concurrent request's steps run between those stages
 * (issue 31: another organization's export page 59 ms behind a looping one-year summary, 8 ms
 * alone; a turn before each statement alone left it at 56 ms, since the JavaScript after an answer
 * ran on without one). A turn costs nothing measurable alone (`bench:ab`).
 */
export function takingTurns<T extends D1Database | D1DatabaseSession>(db: T): T {
  const inner = new WeakMap<object, D1PreparedStatement>();
  const wrap = (statement: D1PreparedStatement): D1PreparedStatement => {
    const wrapped = new Proxy(statement, {
      get(target, property) {
        const value = Reflect.get(target, property, target);
        if (typeof value !== "function") return value;
        if (property === "bind") return (...values: unknown[]) => wrap(target.bind(...values));
        if (RUNS.has(property))
          return async (...args: unknown[]) => {
            await nextTurn();
            const answer = await value.apply(target, args);
            await nextTurn();
            return answer;
          };
        return value.bind(target);
      },
    });
    inner.set(wrapped, statement);
    return wrapped;
  };
  return new Proxy(db, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      if (property === "prepare") return (query: string) => wrap(target.prepare(query));
      // A session of a wrapped database takes turns too.
      if (property === "withSession")
        return (...args: unknown[]) => takingTurns((value as (...a: unknown[]) => D1DatabaseSession).apply(target, args));
      if (property === "exec")
        return async (query: string) => {
          await nextTurn();
          const answer = await (value as (q: string) => Promise<D1ExecResult>).apply(target, [query]);
          await nextTurn();
          return answer;
        };
      if (property === "batch")
        return async (statements: D1PreparedStatement[]) => {
          await nextTurn();
          const answers = await target.batch(statements.map((statement) => inner.get(statement) ?? statement));
          await nextTurn();
          return answers;
        };
      return value.bind(target);
    },
  });
}

/** The statement methods that send it. */
const RUNS = new Set<string | symbol>(["all", "first", "raw", "run"]);

/** Resolves on a later turn of the event loop, after the I/O ready by then. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));
