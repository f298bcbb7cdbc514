/**
 * What `npm start` shows of `wrangler dev` while it loads the demo data: everything but the two
 * lines every request makes (the Worker's JSON info line and wrangler's own request line), so that
 * the keys are not buried under a few hundred of them. Real traffic after that is shown in full.
 */
import { createInterface } from "node:readline";

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour codes are what this strips.
const ANSI = /\u001b\[[0-9;]*m/g;
/** wrangler's request line: `[wrangler:info] GET /path 200 OK (3ms)` (the tag spelling varies by version). */
const WRANGLER_REQUEST = /^\s*\[wrangler:inf(?:o)?\]\s+[A-Z]+\s+\/\S*\s+\d{3}\b/;
/** The Worker's own request line (`http/pipeline.ts`, `src/lib/log.ts`: level first, then the event). */
const WORKER_REQUEST = /^\s*\{"level":"info","event":"request",/;

/** True for a per-request log line of the Worker or of wrangler. */
export function isRequestLog(line) {
  const plain = line.replace(ANSI, "");
  return WRANGLER_REQUEST.test(plain) || WORKER_REQUEST.test(plain);
}

/**
 * A filter for wrangler's output that hides request lines until the demo load is over. Output
 * arrives through a pipe, later than the requests that made it: the load ends with one request
 * carrying `marker` as its correlation id, and `caughtUp` resolves when the Worker's line for it
 * has passed, so whatever is printed then comes after every line of the load. wrangler's own line
 * for that request follows the Worker's and is hidden too; from then on every line shows.
 */
export function quietWhileLoading(marker) {
  let phase = "loading";
  let resolve = () => {};
  const caughtUp = new Promise((r) => {
    resolve = r;
  });
  const show = (line) => {
    if (phase === "live") return true;
    if (!isRequestLog(line)) return true;
    if (phase === "loading" && line.includes(marker)) {
      phase = "marker";
      resolve();
    } else if (phase === "marker" && !WORKER_REQUEST.test(line.replace(ANSI, ""))) {
      phase = "live";
    }
    return false;
  };
  /** Shows everything from now on (the load failed and will send no marker). */
  const live = () => {
    phase = "live";
  };
  return { show, caughtUp, live };
}

/** Copies a child's output stream to `out` line by line, keeping the lines `show` accepts. */
export function relay(stream, out, show) {
  createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY }).on("line", (line) => {
    if (show(line)) out.write(`${line}\n`);
  });
}
