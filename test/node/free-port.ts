import { createServer } from "node:net";

/**
 * A port free on 127.0.0.1 now, for a `wrangler dev` a test starts: a fixed port collides when two
 * suites run at once on one machine (two shells, or several checkouts), and the second suite's
 * server then fails to start.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error("no port"))));
    });
  });
}
