/**
 * A D1 database (or session) whose every statement first lets the event loop take a turn: a timer
 * of 0 ms, so that the I/O other requests wait on (a request accepted, an object's answer) is
 * polled before the statement is sent.
 *
 * Why: on one thread shared by many requests (an isolate deployed; under `wrangler dev` the Worker,
 * its objects and local D1 together), a request whose statements, objects and JavaScript follow one
 * another without a timer never leaves the event loop's queue empty, and the runtime polls for new
 * I/O only when it is: every request arriving meanwhile waits for the whole of it. The summary runs
 * a few statements of milliseconds each with its JavaScript in between; taking a turn before each
 * lets a concurrent request's steps run between them (issue 31: another organization's export
 * page 59 ms behind a looping one-year summary, 8 ms alone, 32 ms with turns). A turn costs
 * nothing measurable alone (`bench:ab`: 0.97x to 1.02x).
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
            return value.apply(target, args);
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
      if (property === "batch")
        return async (statements: D1PreparedStatement[]) => {
          await nextTurn();
          return target.batch(statements.map((statement) => inner.get(statement) ?? statement));
        };
      return value.bind(target);
    },
  });
}

/** The statement methods that send it. */
const RUNS = new Set<string | symbol>(["all", "first", "raw", "run"]);

/** Resolves on a later turn of the event loop, after the I/O ready by then. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));
