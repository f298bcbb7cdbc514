import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DEAD_LETTER_QUEUE, WEBHOOK_MAX_RETRIES, WEBHOOK_QUEUE } from "../../src/webhooks/queues";

/** The consumer's constants describe wrangler.toml's queues; a change to one must reach the other. */
describe("webhook queues: the code and wrangler.toml agree", () => {
  // vitest runs from the project root.
  const toml = readFileSync("wrangler.toml", "utf8");
  const consumers = toml.split("[[queues.consumers]]").slice(1);
  const consumerOf = (queue: string) => consumers.find((c) => c.includes(`queue = "${queue}"`));

  it("the webhook queue parks after WEBHOOK_MAX_RETRIES retries into the dead-letter queue", () => {
    const consumer = consumerOf(WEBHOOK_QUEUE);
    expect(consumer).toBeDefined();
    expect(consumer).toMatch(new RegExp(`\\nmax_retries = ${WEBHOOK_MAX_RETRIES}\\n`));
    expect(consumer).toContain(`dead_letter_queue = "${DEAD_LETTER_QUEUE}"`);
  });

  it("the dead-letter queue has a consumer", () => {
    expect(consumerOf(DEAD_LETTER_QUEUE)).toBeDefined();
  });
});
