/** The webhook queues as `wrangler.toml` declares them (test/unit/queues.test.ts checks they agree). */

export const WEBHOOK_QUEUE = "pr-review-webhooks";
export const DEAD_LETTER_QUEUE = "pr-review-webhooks-dlq";

/**
 * `max_retries` of the webhook queue's consumer: a message reaches the dead-letter queue after
 * this many retries, so after 1 + this many attempts to apply it.
 */
export const WEBHOOK_MAX_RETRIES = 5;
