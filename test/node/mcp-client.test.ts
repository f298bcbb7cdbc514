import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateLocalD1, startWrangler } from "../../scripts/lib/bench-common.mjs";
import { controlPlaneClient } from "../../scripts/lib/control-plane-client.mjs";
import { MCP_TOOL_NAMES } from "../../src/mcp/tools";
import { freePort } from "./free-port";

/**
 * Contract section 15 with real clients: the SDK's v1 `Client` (`@modelcontextprotocol/sdk`, the
 * one inside the MCP Inspector) and its v2 `Client` (`@modelcontextprotocol/client`), each over its
 * `StreamableHTTPClientTransport`, against `wrangler dev` on loopback (the Worker as it runs
 * locally, not the test runtime), with whatever protocol revision each negotiates.
 */

const ADMIN_TOKEN = "mcp-client-test-admin-token-0123456789";
const ORG = "mcp-acme";
const TEAM_ORG = "mcp-team";
const ADMIN_ID = "7001";
const MEMBER_ID = "7002";
const BOT_ID = "7003";
const OUTSIDER_ID = "7004";
const LIMITED_ID = "7005";
/** The analytics quota of this server: small, so that one owner can exhaust it (the admin makes 9 analytics calls). */
const ANALYTICS_QUOTA = 20;

let server: { url: string; stop: () => Promise<void> } | undefined;
let persistTo = "";
const keys = { members: "", analytics: "", memberMembers: "", outsiderMembers: "", limitedAnalytics: "" };

/** What both clients offer, as far as these tests use it. */
interface AnyClient {
  listTools(): Promise<{
    tools: { name: string; title?: string; annotations?: Record<string, unknown>; outputSchema?: { type?: unknown } }[];
  }>;
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

const CLIENTS = {
  v1: (url: URL, headers: Record<string, string>): Promise<AnyClient> => {
    const client = new ClientV1({ name: "mcp-client-test-v1", version: "1.0.0" });
    return client.connect(new TransportV1(url, { requestInit: { headers } })).then(() => client as unknown as AnyClient);
  },
  v2: (url: URL, headers: Record<string, string>): Promise<AnyClient> => {
    const client = new ClientV2({ name: "mcp-client-test-v2", version: "1.0.0" });
    return client.connect(new TransportV2(url, { requestInit: { headers } })).then(() => client as unknown as AnyClient);
  },
};
type ClientVersion = keyof typeof CLIENTS;

/**
 * A connected client that has listed the tools, as the MCP Inspector does before a call: the v1
 * client validates a result's `structuredContent` against the listed `outputSchema` from then on.
 */
async function connect(version: ClientVersion, key = keys.members, path = "/mcp"): Promise<AnyClient> {
  if (!server) throw new Error("wrangler dev is not running");
  const client = await CLIENTS[version](new URL(`${server.url}${path}`), { Authorization: `Bearer ${key}` });
  await client.listTools();
  return client;
}

async function rest(path: string, key = keys.members): Promise<unknown> {
  const res = await fetch(`${server?.url}${path}`, { headers: { Authorization: `Bearer ${key}` } });
  return res.json();
}

beforeAll(async () => {
  persistTo = mkdtempSync(join(tmpdir(), "mcp-client-"));
  await migrateLocalD1(persistTo);
  server = await startWrangler({
    persistTo,
    port: await freePort(),
    adminToken: ADMIN_TOKEN,
    vars: { RATE_LIMIT_ANALYTICS: String(ANALYTICS_QUOTA), RATE_LIMIT_MEMBERS: "1000000" },
  });
  const cp = controlPlaneClient(server.url, ADMIN_TOKEN);
  for (const [org, plan] of [
    [ORG, "pro"],
    [TEAM_ORG, "team"],
  ] as const) {
    await cp.putOrganization(org, {
      installationId: org === ORG ? 99_000_123 : 99_000_124,
      installedAt: "2025-01-01T00:00:00.000Z",
      blocked: false,
      plan,
      subscription: { status: "active", billedThroughService: true, purchasedSeats: 5 },
    });
  }
  for (const id of [ADMIN_ID, MEMBER_ID, BOT_ID, OUTSIDER_ID, LIMITED_ID]) await cp.putUser(id, { githubLogin: `user${id}` });
  for (const [org, id, role, seat, isBot] of [
    [ORG, ADMIN_ID, "admin", true, false],
    [ORG, MEMBER_ID, "member", false, false],
    [ORG, BOT_ID, "member", false, true],
    [ORG, LIMITED_ID, "member", false, false],
    [TEAM_ORG, ADMIN_ID, "admin", true, false],
  ] as const) {
    await cp.putMember(org, id, { githubLogin: `user${id}`, workEmail: `user${id}@example.com`, role, seat, isBot });
  }
  keys.members = (await cp.createKey(ADMIN_ID, "members")).key;
  keys.analytics = (await cp.createKey(ADMIN_ID, "analytics")).key;
  keys.memberMembers = (await cp.createKey(MEMBER_ID, "members")).key;
  keys.outsiderMembers = (await cp.createKey(OUTSIDER_ID, "members")).key;
  keys.limitedAnalytics = (await cp.createKey(LIMITED_ID, "analytics")).key;
}, 180_000);

afterAll(async () => {
  await server?.stop();
  if (persistTo) rmSync(persistTo, { recursive: true, force: true });
}, 60_000);

describe("the SDK's v2 client against wrangler dev", () => {
  it("lists every tool of the tools module, each key kind its own, with annotations and output schemas", async () => {
    const members = await connect("v2");
    const analytics = await connect("v2", keys.analytics);
    const memberTools = (await members.listTools()).tools;
    const analyticsTools = (await analytics.listTools()).tools;
    const names = [...memberTools, ...analyticsTools].map((t) => t.name);
    expect(names.sort()).toEqual([...MCP_TOOL_NAMES].sort());
    expect(memberTools.map((t) => t.name)).toContain("get_member");
    expect(analyticsTools.map((t) => t.name)).toContain("list_pull_request_analytics");
    expect(memberTools.find((t) => t.name === "get_member")?.annotations?.readOnlyHint).toBe(true);
    expect(memberTools.find((t) => t.name === "update_member")?.annotations?.readOnlyHint).toBe(false);
    expect([...memberTools, ...analyticsTools].every((t) => t.outputSchema?.type === "object")).toBe(true);
    await members.close();
    await analytics.close();
  });

  it("read-only: /mcp/readonly lists the reads only and refuses a write as an unknown tool", async () => {
    const client = await connect("v2", keys.members, "/mcp/readonly");
    const { tools } = await client.listTools();
    expect(tools.every((t) => t.annotations?.readOnlyHint === true)).toBe(true);
    await expect(
      client.callTool({
        name: "update_member",
        arguments: { org: ORG, githubUserId: MEMBER_ID, seat: true, expectedSeat: false },
      }),
    ).rejects.toThrow(/update_member not found/);
    expect(await rest(`/api/v1/organizations/${ORG}/members/${MEMBER_ID}`)).toMatchObject({ seat: false });
    await client.close();
  });

  it("an analytics key offers the export", async () => {
    const client = await connect("v2", keys.analytics);
    const result = await client.callTool({ name: "list_pull_request_analytics", arguments: { org: ORG, perPage: 5 } });
    expect(result.structuredContent).toEqual({ data: [], nextCursor: null });
    await client.close();
  });

  it("a bad key is refused before any MCP exchange", async () => {
    await expect(connect("v2", "cbk_not-a-key")).rejects.toThrow();
  });
});

/** A refusal as both clients must see it: a tool result, its error JSON as the one text item, no structuredContent. */
function refusal(result: Record<string, unknown>): Record<string, unknown> {
  expect(result.isError).toBe(true);
  expect(result.structuredContent).toBeUndefined();
  const content = result.content as { type: string; text: string }[];
  expect(content).toHaveLength(1);
  expect(content[0]?.type).toBe("text");
  const body = JSON.parse(content[0]?.text ?? "") as { error: Record<string, unknown> };
  expect(Object.keys(body)).toEqual(["error"]);
  return body.error;
}

describe.each(["v1", "v2"] as const)("refusals read by the SDK's %s client (contract section 15)", (version) => {
  it("a success's structuredContent is the REST body", async () => {
    const client = await connect(version);
    const read = await client.callTool({ name: "get_member", arguments: { org: ORG, githubUserId: BOT_ID } });
    expect(read.isError).toBeFalsy();
    expect(read.structuredContent).toEqual(await rest(`/api/v1/organizations/${ORG}/members/${BOT_ID}`));
    expect(JSON.parse((read.content as { text: string }[])[0]?.text ?? "")).toEqual(read.structuredContent);
    await client.close();
  });

  it("the members tools' refusals: stale guard 409, bot admin 422, 404, 403, 400", async () => {
    const client = await connect(version);
    const cases: [Record<string, unknown>, string, Record<string, unknown>][] = [
      [
        { name: "update_member", arguments: { org: ORG, githubUserId: MEMBER_ID, seat: true, expectedSeat: true } },
        "expected_value_mismatch",
        { retriable: false, details: [{ path: "expectedSeat", message: "current value is false" }] },
      ],
      [
        { name: "update_member", arguments: { org: ORG, githubUserId: BOT_ID, role: "admin", expectedRole: "member" } },
        "bot_cannot_be_admin",
        {},
      ],
      [{ name: "get_member", arguments: { org: ORG, githubUserId: OUTSIDER_ID } }, "member_not_found", {}],
      [{ name: "get_member", arguments: { org: "mcp-nowhere", githubUserId: MEMBER_ID } }, "org_not_found", {}],
      [{ name: "get_member", arguments: { org: ORG, githubUserId: "abc" } }, "invalid_request", {}],
      [
        {
          name: "update_members",
          arguments: { org: ORG, changes: [{ githubUserId: MEMBER_ID, seat: true, expectedSeat: true }] },
        },
        "expected_value_mismatch",
        { details: [{ path: "changes.0.expectedSeat", message: "current value is false" }] },
      ],
    ];
    for (const [call, code, more] of cases) {
      const error = refusal(await client.callTool(call as { name: string; arguments: Record<string, unknown> }));
      expect(error).toMatchObject({ code, ...more });
      expect(typeof error.message).toBe("string");
    }
    // Nothing changed.
    expect(await rest(`/api/v1/organizations/${ORG}/members/${MEMBER_ID}`)).toMatchObject({ seat: false, role: "member" });
    expect(await rest(`/api/v1/organizations/${ORG}/members/${BOT_ID}`)).toMatchObject({ role: "member" });
    await client.close();

    // 403: a member who is not an admin, and a caller outside the organization.
    const member = await connect(version, keys.memberMembers);
    const notAdmin = await member.callTool({
      name: "update_member",
      arguments: { org: ORG, githubUserId: BOT_ID, seat: true, expectedSeat: false },
    });
    expect(refusal(notAdmin)).toMatchObject({ code: "not_org_admin" });
    await member.close();
    const outsider = await connect(version, keys.outsiderMembers);
    const foreign = await outsider.callTool({ name: "list_members", arguments: { org: ORG } });
    expect(refusal(foreign)).toMatchObject({ code: "org_access_denied" });
    await outsider.close();
  });

  it("the analytics tools' refusals: plan_required, repo_access_denied, a too wide summary", async () => {
    const client = await connect(version, keys.analytics);
    const cases: [string, Record<string, unknown>, string][] = [
      ["list_pull_request_analytics", { org: TEAM_ORG }, "plan_required"],
      ["list_pull_request_analytics", { org: ORG, repo: "no-such-repo" }, "repo_access_denied"],
      ["summarize_pull_request_analytics", { org: TEAM_ORG, groupBy: "week" }, "plan_required"],
      [
        "summarize_pull_request_analytics",
        { org: ORG, groupBy: "week", startDate: "1970-01-01", endDate: "9999-12-31" },
        "invalid_request",
      ],
    ];
    for (const [name, args, code] of cases) {
      expect(refusal(await client.callTool({ name, arguments: args }))).toMatchObject({ code });
    }
    await client.close();
  });

  it("rate_limited, with retryAfterSeconds, once the owner's quota is spent", async () => {
    const client = await connect(version, keys.limitedAnalytics);
    // The v1 and v2 runs share the owner's quota: spend what is left, then one more is refused.
    let error: Record<string, unknown> | undefined;
    for (let call = 0; call <= ANALYTICS_QUOTA && error === undefined; call++) {
      const result = await client.callTool({ name: "list_pull_request_analytics", arguments: { org: ORG } });
      if (result.isError) error = refusal(result);
    }
    expect(error).toMatchObject({ code: "rate_limited", retriable: true });
    expect(error?.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    await client.close();
  });
});
