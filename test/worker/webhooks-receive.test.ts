import { describe, expect, it, vi } from "vitest";
import { signatureHeader } from "../../src/auth/webhook-signature";
import { parkDelivery } from "../../src/storage/parked";
import { ADMIN_TOKEN, admin, call, env, fetchWithEnv, type MemberErrorBody, unique } from "./helpers";
import { deliver, example, newDelivery, PREVIOUS_SECRET, WEBHOOK_SECRET } from "./webhook-helpers";

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

  it("without a secret the path does not exist for any method (no 405 telling it apart); with one, 405 + Allow", async () => {
    for (const method of ["GET", "HEAD", "PUT"]) {
      const request = new Request("https://service.test/webhooks/github", { method });
      const unset = await fetchWithEnv(request, { GITHUB_WEBHOOK_SECRET: undefined });
      expect(unset.status, method).toBe(404);
      const set = await fetchWithEnv(request, {});
      expect(set.status, method).toBe(405);
      expect(set.headers.get("Allow")).toBe("POST");
    }
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

/** The Rate Limiting binding's local windows are aligned to the wall clock (60 s). */
const windowOf = (ms: number) => Math.floor(ms / 60_000);
let addresses = 0;
const freshAddress = () => `192.0.2.${(addresses++ % 250) + 1}`;

describe("bad signatures count as failed authentications (AUTH_FAILURES, per address)", () => {
  it("a bad signature on a large body is refused with 401 and counted: it is that address's 100th failure, the next one is 429", async () => {
    const ip = "198.51.100.77";
    const started = Date.now();
    const big = `{"pad":"${"x".repeat(24 * 1024 * 1024)}"}`;
    const large = await deliver("pull_request", null, {
      body: big,
      secret: "not-the-secret",
      headers: { "CF-Connecting-IP": ip },
    });
    expect(large.status).toBe(401);
    const payload = example("pull_request", "opened", unique("bad"));
    const statuses: number[] = [];
    for (let i = 0; i < 100; i++) {
      const res = await deliver("pull_request", payload, { secret: "not-the-secret", headers: { "CF-Connecting-IP": ip } });
      statuses.push(res.status);
      if (res.status === 429) break;
    }
    if (windowOf(started) === windowOf(Date.now())) {
      // One window: the large body was failure 1, so 99 more are 401 and the 101st failure is 429.
      expect(statuses.slice(0, 99).every((s) => s === 401)).toBe(true);
      expect(statuses[99]).toBe(429);
    } else {
      // A window boundary passed (fixed windows locally): the limit restarted, and 429 may come later.
      expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
    }
  });

  it("a flooding address gets 429 with Retry-After before its body is read", async () => {
    const ip = freshAddress();
    const payload = example("pull_request", "opened", unique("flood"));
    let first = await deliver("pull_request", payload, { secret: "wrong", headers: { "CF-Connecting-IP": ip } });
    let refused = 0;
    while (first.status === 401 && refused < 250) {
      refused++;
      first = await deliver("pull_request", payload, { secret: "wrong", headers: { "CF-Connecting-IP": ip } });
    }
    expect(first.status).toBe(429);
    expect(refused).toBeGreaterThanOrEqual(100);
    expect(refused).toBeLessThanOrEqual(200);
    expect(((await first.json()) as MemberErrorBody).error).toMatchObject({ code: "rate_limited", retriable: true });

    // A body that never ends would hold a reader until the 10 s deadline (then 400): refused at once.
    const never = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"zen":'));
      },
    });
    const throttled = await call("/webhooks/github", {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "X-GitHub-Event": "ping",
        "X-GitHub-Delivery": newDelivery(),
        "X-Hub-Signature-256": `sha256=${"0".repeat(64)}`,
        "CF-Connecting-IP": ip,
      },
      body: never,
      duplex: "half",
    } as RequestInit);
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
    // Another address is not affected.
    expect((await deliver("pull_request", payload, { headers: { "CF-Connecting-IP": freshAddress() } })).status).toBe(202);
  });

  it("a good signature over a body arriving in many small chunks is accepted (either secret)", async () => {
    for (const secret of [WEBHOOK_SECRET, PREVIOUS_SECRET]) {
      const delivery = newDelivery();
      const bytes = new TextEncoder().encode(JSON.stringify(example("pull_request", "opened", unique("chunks"))));
      let offset = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (offset >= bytes.length) return controller.close();
          controller.enqueue(bytes.slice(offset, offset + 97));
          offset += 97;
        },
      });
      const res = await call("/webhooks/github", {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "X-GitHub-Event": "pull_request",
          "X-GitHub-Delivery": delivery,
          "X-Hub-Signature-256": await signatureHeader(secret, bytes),
        },
        body,
        duplex: "half",
      } as RequestInit);
      expect(res.status).toBe(202);
      expect(await res.json()).toEqual({ delivery, status: "queued" });
    }
  });
});

describe("X-GitHub-Event names no property of a plain object", () => {
  it.each(["constructor", "__proto__"])("%s: a signed delivery is ignored, not queued as changes", async (event) => {
    // Shaped like a reduction: `Object` as a reducer would hand it back as the changes to apply.
    const org = unique("proto");
    const res = await deliver(event, { action: "created", org, changes: [{ kind: "member_removed", githubUserId: "1" }] });
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ status: "ignored" });
  });
});

/** A GitHub payload's objects, to spoil one field. */
type Payload = Record<"repository" | "pull_request" | "installation", Record<string, unknown>>;

describe("deliveries that can never apply are ignored with a warning, not queued", () => {
  const cases: [string, string, (p: Payload) => void][] = [
    [
      "a repository name with a space",
      "pull_request",
      (p) => {
        p.repository.name = "has space";
      },
    ],
    [
      "pull request number 0",
      "pull_request",
      (p) => {
        p.pull_request.number = 0;
      },
    ],
    [
      "negative additions",
      "pull_request",
      (p) => {
        p.pull_request.additions = -5;
      },
    ],
    [
      "installation id 0",
      "installation",
      (p) => {
        p.installation.id = 0;
      },
    ],
  ];
  it.each(cases)("%s", async (_name, event, spoil) => {
    const payload = example(event, event === "installation" ? "created" : "opened", unique("never"));
    spoil(payload as unknown as Payload);
    const warned = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const delivery = newDelivery();
      const res = await deliver(event, payload, { delivery });
      expect(res.status).toBe(202);
      expect(await res.json()).toEqual({ delivery, status: "ignored" });
      expect(warned).toHaveBeenCalledTimes(1);
      expect(JSON.parse(String(warned.mock.calls[0]?.[0]))).toMatchObject({ level: "warn", delivery, event: "webhook ignored" });
      // Contract section 17: parked, never silently ignored; a replay still cannot apply it.
      const id = `${delivery}:payload`;
      const parked = ((await (await admin("GET", "/internal/v1/webhooks/parked?limit=100")).json()) as ParkedList).data;
      expect(parked.find((p) => p.id === id)).toMatchObject({
        delivery,
        attempts: 0,
        message: { kind: "payload", event, payload },
      });
      const replay = await admin("POST", `/internal/v1/webhooks/parked/${id}/replay`);
      expect(replay.status).toBe(422);
      expect(((await replay.json()) as MemberErrorBody).error.code).toBe("delivery_not_applicable");
    } finally {
      warned.mockRestore();
    }
  });
});

type ParkedList = { data: { id: string; delivery: string; attempts: number; message: unknown }[] };

describe("contract section 17: a parked payload is reduced again on replay (after a fix of the service)", () => {
  it("a payload that fits now is queued and applied, and its parked copy is dropped", async () => {
    const org = unique("parked");
    const delivery = newDelivery();
    const payload = example("organization", "member_added", org);
    const parkedAt = Date.now() - 3 * 86_400_000;
    await parkDelivery(env.DB, {
      id: `${delivery}:payload`,
      delivery,
      event: "organization.member_added",
      message: { kind: "payload", event: "organization", payload },
      attempts: 0,
      parkedAt,
    });
    const sent: unknown[] = [];
    const recording = {
      send: async (body: unknown) => {
        sent.push(body);
      },
      sendBatch: async (batch: { body: unknown }[]) => {
        sent.push(...batch.map((m) => m.body));
      },
    };
    const replay = await fetchWithEnv(
      new Request(`https://service.test/internal/v1/webhooks/parked/${delivery}:payload/replay`, {
        method: "POST",
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
      }),
      { WEBHOOKS: recording },
    );
    expect(replay.status).toBe(200);
    // What the receiver would have queued: the reduced delivery, under its own delivery id, received
    // no later than it was parked (how old it is, for a rename's hold: held_logins).
    expect(sent).toEqual([
      expect.objectContaining({
        v: 1,
        delivery,
        part: 0,
        org,
        receivedAt: parkedAt,
        change: expect.objectContaining({ kind: "member_added" }),
      }),
    ]);
    const parked = ((await (await admin("GET", "/internal/v1/webhooks/parked?limit=100")).json()) as ParkedList).data;
    expect(parked.map((p) => p.id)).not.toContain(`${delivery}:payload`);
  });
});

describe("issue 18: the 202 waits for one round of queue sends, whatever the repository count", () => {
  it("an installation with 20,000 repositories is enqueued in a few batches sent together, every message once", async () => {
    const payload = example("installation", "created", unique("big"));
    payload.repositories = Array.from({ length: 20_000 }, (_, i) => ({
      id: i + 1,
      name: `repository-${i}`,
      full_name: `big/repository-${i}`,
      private: i % 3 === 0,
    }));
    const body = JSON.stringify(payload);
    const sent: unknown[][] = [];
    let inFlight = 0;
    let mostInFlight = 0;
    const recording = {
      send: async () => {
        throw new Error("one message at a time is not how deliveries are enqueued");
      },
      sendBatch: async (batch: { body: unknown }[]) => {
        inFlight += 1;
        mostInFlight = Math.max(mostInFlight, inFlight);
        // Every send of the delivery starts before the first one finishes.
        await new Promise((resolve) => setTimeout(resolve, 5));
        inFlight -= 1;
        expect(batch.length).toBeLessThanOrEqual(100);
        expect(new TextEncoder().encode(JSON.stringify(batch.map((m) => m.body))).byteLength).toBeLessThan(256 * 1024);
        sent.push(batch.map((m) => m.body));
      },
    };
    const request = new Request("https://service.test/webhooks/github", {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "X-GitHub-Event": "installation",
        "X-GitHub-Delivery": newDelivery(),
        "X-Hub-Signature-256": await signatureHeader(WEBHOOK_SECRET, body),
      },
      body,
    });
    const before = Date.now();
    const res = await fetchWithEnv(request, { WEBHOOKS: recording });
    const after = Date.now();
    expect(res.status).toBe(202);
    const parts = sent.flat() as { part: number; receivedAt: number }[];
    // Every message carries when the service received the delivery (one time for all its parts).
    expect(new Set(parts.map((m) => m.receivedAt)).size).toBe(1);
    expect(parts[0]?.receivedAt).toBeGreaterThanOrEqual(before);
    expect(parts[0]?.receivedAt).toBeLessThanOrEqual(after);
    expect(parts.map((m) => m.part).sort((a, b) => a - b)).toEqual(parts.map((_, i) => i));
    expect(parts.length).toBe(1 + Math.ceil(20_000 / 500));
    expect(mostInFlight).toBe(sent.length);
  });
});
