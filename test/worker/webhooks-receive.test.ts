import { describe, expect, it } from "vitest";
import { signatureHeader } from "../../src/webhooks/signature";
import { env, fetchWithEnv, type MemberErrorBody, unique } from "./helpers";
import { deliver, example, newDelivery, PREVIOUS_SECRET } from "./webhook-helpers";

/** Contract section 9: receiving. Every response is checked against the internal document by `call`. */

const errorOf = async (res: Response) => ((await res.json()) as MemberErrorBody).error;

describe("the signature (X-Hub-Signature-256, HMAC-SHA256 of the raw body)", () => {
  it("matches GitHub's published test vector", async () => {
    expect(await signatureHeader("It's a Secret to Everybody", "Hello, World!")).toBe(
      "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
    );
  });

  it("right: 202 queued with the delivery id", async () => {
    const delivery = newDelivery();
    const res = await deliver("pull_request", example("pull_request", "opened", unique("sig")), { delivery });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ delivery, status: "queued" });
  });

  it("with the previous secret during a rotation: accepted", async () => {
    const res = await deliver("pull_request", example("pull_request", "opened", unique("sig")), { secret: PREVIOUS_SECRET });
    expect(res.status).toBe(202);
  });

  it("wrong secret, a body changed after signing, a malformed or a missing header: 401", async () => {
    const payload = example("pull_request", "opened", unique("sig"));
    const wrong = await deliver("pull_request", payload, { secret: "not-the-secret" });
    expect(wrong.status).toBe(401);
    expect((await errorOf(wrong)).code).toBe("unauthenticated");

    const signed = await signatureHeader("test-webhook-secret", JSON.stringify(payload));
    const tampered = await deliver("pull_request", payload, {
      body: JSON.stringify({ ...payload, number: 999 }),
      secret: null,
      headers: { "X-Hub-Signature-256": signed },
    });
    expect(tampered.status).toBe(401);

    const malformed = await deliver("pull_request", payload, { secret: null, headers: { "X-Hub-Signature-256": "sha1=abc" } });
    expect(malformed.status).toBe(401);
    const missing = await deliver("pull_request", payload, { secret: null });
    expect(missing.status).toBe(401);
  });

  it("only the previous secret set is not enough: without GITHUB_WEBHOOK_SECRET the path answers 404", async () => {
    const body = JSON.stringify(example("pull_request", "opened", unique("sig")));
    const request = new Request("https://service.test/webhooks/github", {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "X-GitHub-Event": "pull_request",
        "X-GitHub-Delivery": newDelivery(),
        "X-Hub-Signature-256": await signatureHeader(PREVIOUS_SECRET, body),
      },
      body,
    });
    const res = await fetchWithEnv(request, { GITHUB_WEBHOOK_SECRET: undefined });
    expect(res.status).toBe(404);
  });
});

describe("headers and body", () => {
  const payload = () => example("pull_request", "opened", unique("hdr"));

  it("missing X-GitHub-Event or X-GitHub-Delivery: 400 naming the header", async () => {
    const noEvent = await deliver("pull_request", payload(), { headers: { "X-GitHub-Event": null } });
    expect(noEvent.status).toBe(400);
    expect((await errorOf(noEvent)).details).toEqual([{ path: "X-GitHub-Event", message: expect.any(String) }]);
    const noDelivery = await deliver("pull_request", payload(), { headers: { "X-GitHub-Delivery": null } });
    expect(noDelivery.status).toBe(400);
    expect((await errorOf(noDelivery)).details).toEqual([{ path: "X-GitHub-Delivery", message: expect.any(String) }]);
  });

  it("not application/json (GitHub's form encoding): 415", async () => {
    const res = await deliver("pull_request", payload(), { headers: { "Content-Type": "application/x-www-form-urlencoded" } });
    expect(res.status).toBe(415);
  });

  it("a body over 25 MiB: 413", async () => {
    const big = `{"pad":"${"x".repeat(25 * 1024 * 1024)}"}`;
    const res = await deliver("pull_request", null, { body: big });
    expect(res.status).toBe(413);
    expect((await errorOf(res)).code).toBe("payload_too_large");
  });

  it("a signed body that is not a JSON object: 400", async () => {
    const res = await deliver("pull_request", null, { body: "[1,2]" });
    expect(res.status).toBe(400);
  });
});

describe("answers", () => {
  it("ping: 200 pong", async () => {
    const res = await deliver("ping", example("ping", null, unique("ping")));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "pong" });
  });

  it("an event or action the service does not use: 202 ignored", async () => {
    const star = await deliver("star", { action: "created", repository: {} });
    expect(await star.json()).toMatchObject({ status: "ignored" });
    const edited = await deliver("member", example("member", "edited", unique("ign")));
    expect(edited.status).toBe(202);
    expect(await edited.json()).toMatchObject({ status: "ignored" });
  });

  it("the same delivery id again: 202 duplicate, and the marker lives at least 7 days", async () => {
    const delivery = newDelivery();
    const payload = example("pull_request", "opened", unique("dup"));
    expect(await (await deliver("pull_request", payload, { delivery })).json()).toEqual({ delivery, status: "queued" });
    // The marker is written right after the answer (the delivery is safe in the queue by then).
    expect(await env.WEBHOOK_DELIVERIES.get(`delivery:${delivery}`)).not.toBeNull();
    expect(await (await deliver("pull_request", payload, { delivery })).json()).toEqual({ delivery, status: "duplicate" });
    const { metadata, value } = await env.WEBHOOK_DELIVERIES.getWithMetadata(`delivery:${delivery}`);
    expect(value).not.toBeNull();
    expect(metadata).toBeNull();
    const listed = await env.WEBHOOK_DELIVERIES.list({ prefix: `delivery:${delivery}` });
    expect(listed.keys[0]?.expiration).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000) + 7 * 24 * 3600);
  });

  it("a failed enqueue is a 503 and leaves no marker: GitHub's redelivery is queued, not a duplicate", async () => {
    const delivery = newDelivery();
    const payload = example("pull_request", "opened", unique("lost"));
    const body = JSON.stringify(payload);
    const request = () =>
      signatureHeader("test-webhook-secret", body).then(
        (signature) =>
          new Request("https://service.test/webhooks/github", {
            method: "POST",
            headers: {
              "Content-Type": "application/json",
              "X-GitHub-Event": "pull_request",
              "X-GitHub-Delivery": delivery,
              "X-Hub-Signature-256": signature,
            },
            body,
          }),
      );
    const broken = {
      send: async () => {
        throw new Error("queue down [expected-fault]");
      },
      sendBatch: async () => {
        throw new Error("queue down [expected-fault]");
      },
    };
    const failed = await fetchWithEnv(await request(), { WEBHOOKS: broken });
    expect(failed.status).toBe(503);
    const again = await fetchWithEnv(await request(), {});
    expect(await again.json()).toEqual({ delivery, status: "queued" });
  });
});
