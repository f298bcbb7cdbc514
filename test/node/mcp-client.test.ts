import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateLocalD1, startWrangler } from "../../scripts/lib/bench-common.mjs";
import { controlPlaneClient } from "../../scripts/lib/control-plane-client.mjs";
import { freePort } from "./free-port";

/**
 * Contract section 15 with a real client: the SDK's own `Client` over `StreamableHTTPClientTransport`
 * against `wrangler dev` on loopback (the Worker as it runs locally, not the test runtime), with
 * whatever protocol revision the two negotiate.
 */

const ADMIN_TOKEN = "mcp-client-test-admin-token-0123456789";
const ORG = "mcp-acme";
const ADMIN_ID = "7001";
const MEMBER_ID = "7002";

let server: { url: string; stop: () => Promise<void> } | undefined;
let persistTo = "";
const keys = { members: "", analytics: "" };

async function connect(path = "/mcp", key = keys.members): Promise<Client> {
  if (!server) throw new Error("wrangler dev is not running");
  const client = new Client({ name: "mcp-client-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}${path}`), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  return client;
}

async function rest(path: string): Promise<unknown> {
  const res = await fetch(`${server?.url}${path}`, { headers: { Authorization: `Bearer ${keys.members}` } });
  return res.json();
}

beforeAll(async () => {
  persistTo = mkdtempSync(join(tmpdir(), "mcp-client-"));
  await migrateLocalD1(persistTo);
  server = await startWrangler({ persistTo, port: await freePort(), adminToken: ADMIN_TOKEN });
  const cp = controlPlaneClient(server.url, ADMIN_TOKEN);
  await cp.putOrganization(ORG, {
    installationId: 99_000_123,
    installedAt: "2025-01-01T00:00:00.000Z",
    blocked: false,
    plan: "pro",
    subscription: { status: "active", billedThroughService: true, purchasedSeats: 5 },
  });
  for (const [id, role, seat] of [
    [ADMIN_ID, "admin", true],
    [MEMBER_ID, "member", false],
  ] as const) {
    await cp.putUser(id, { githubLogin: `user${id}` });
    await cp.putMember(ORG, id, { githubLogin: `user${id}`, workEmail: `user${id}@example.com`, role, seat, isBot: false });
  }
  keys.members = (await cp.createKey(ADMIN_ID, "members")).key;
  keys.analytics = (await cp.createKey(ADMIN_ID, "analytics")).key;
}, 180_000);

afterAll(async () => {
  await server?.stop();
  if (persistTo) rmSync(persistTo, { recursive: true, force: true });
}, 60_000);

describe("the SDK's client against wrangler dev", () => {
  it("lists the member tools with their annotations and output schemas", async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      "get_member",
      "list_members",
      "list_organizations",
      "read_audit_log",
      "update_member",
      "update_members",
    ]);
    expect(tools.find((t) => t.name === "get_member")?.annotations?.readOnlyHint).toBe(true);
    expect(tools.find((t) => t.name === "update_member")?.annotations?.readOnlyHint).toBe(false);
    expect(tools.every((t) => t.outputSchema?.type === "object")).toBe(true);
    await client.close();
  });

  it("get_member's structuredContent is the REST body; a stale update_member changes nothing", async () => {
    const client = await connect();
    const read = await client.callTool({ name: "get_member", arguments: { org: ORG, githubUserId: MEMBER_ID } });
    expect(read.isError).toBeFalsy();
    expect(read.structuredContent).toEqual(await rest(`/api/v1/organizations/${ORG}/members/${MEMBER_ID}`));

    const stale = await client.callTool({
      name: "update_member",
      arguments: { org: ORG, githubUserId: MEMBER_ID, seat: false, expectedSeat: true },
    });
    expect(stale.isError).toBe(true);
    expect(stale.structuredContent).toMatchObject({
      error: { code: "expected_value_mismatch", details: [{ path: "expectedSeat", message: "current value is false" }] },
    });

    const guarded = await client.callTool({
      name: "update_member",
      arguments: { org: ORG, githubUserId: MEMBER_ID, seat: true, expectedSeat: false },
    });
    expect(guarded.structuredContent).toMatchObject({ changed: true, after: { seat: true } });
    expect(await rest(`/api/v1/organizations/${ORG}/members/${MEMBER_ID}`)).toMatchObject({ seat: true });
    await client.close();
  });

  it("read-only: /mcp/readonly lists the reads only and refuses a write as an unknown tool", async () => {
    const client = await connect("/mcp/readonly");
    const { tools } = await client.listTools();
    expect(tools.every((t) => t.annotations?.readOnlyHint === true)).toBe(true);
    await expect(
      client.callTool({
        name: "update_member",
        arguments: { org: ORG, githubUserId: MEMBER_ID, seat: false, expectedSeat: true },
      }),
    ).rejects.toThrow(/update_member not found/);
    expect(await rest(`/api/v1/organizations/${ORG}/members/${MEMBER_ID}`)).toMatchObject({ seat: true });
    await client.close();
  });

  it("an analytics key offers the export", async () => {
    const client = await connect("/mcp", keys.analytics);
    const result = await client.callTool({ name: "list_pull_request_analytics", arguments: { org: ORG, perPage: 5 } });
    expect(result.structuredContent).toEqual({ data: [], nextCursor: null });
    await client.close();
  });

  it("a bad key is refused before any MCP exchange", async () => {
    await expect(connect("/mcp", "cbk_not-a-key")).rejects.toThrow();
  });
});
