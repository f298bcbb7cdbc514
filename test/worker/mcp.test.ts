import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { addMember, admin, call, createKey, createOrg, createUser, unique } from "./helpers";
import { callTool, INITIALIZE, listTools, mcpPost, rpc } from "./mcp-helpers";

/** Contract section 15: the MCP endpoint's transport, keys, tools, read-only mode and quotas. */

async function world() {
  const org = await createOrg(unique("mcp"), { plan: "pro" });
  const [owner, member] = [await createUser(), await createUser()];
  await addMember(org, owner, "admin");
  await addMember(org, member, "member", { seat: false });
  return {
    org,
    owner,
    member,
    members: (await createKey(owner, "members")).key,
    analytics: (await createKey(owner, "analytics")).key,
  };
}

const MEMBER_TOOLS = ["get_member", "list_members", "list_organizations", "read_audit_log", "update_member", "update_members"];
const READ_TOOLS = ["get_member", "list_members", "list_organizations", "read_audit_log"];

describe("transport: stateless Streamable HTTP", () => {
  it("initialize, then tools/list without a session id; GET /mcp is 405", async () => {
    const w = await world();
    const init = await rpc(w.members, "initialize", INITIALIZE);
    expect(init.response.status).toBe(200);
    expect(init.message?.result).toMatchObject({ serverInfo: { name: "pr-review-service" }, capabilities: { tools: {} } });
    expect(init.response.headers.get("mcp-session-id")).toBeNull();
    expect(init.response.headers.get("X-Correlation-Id")).toBeTruthy();
    expect(init.response.headers.get("Cache-Control")).toBe("no-store");
    expect((await rpc(w.members, "ping")).message?.result).toEqual({});

    const get = await exports.default.fetch(
      new Request("https://service.test/mcp", { headers: { Authorization: `Bearer ${w.members}` } }),
    );
    expect(get.status).toBe(405);
    expect(get.headers.get("Allow")).toBe("POST");
  });
});

describe("401 over HTTP, before the MCP server is reached", () => {
  it("no key, another scheme, a malformed key, a regenerated key, a blocked owner", async () => {
    const w = await world();
    const old = w.members;
    await createKey(w.owner, "members");
    const blockedOwner = await createUser();
    const blockedKey = (await createKey(blockedOwner, "members")).key;
    await admin("PUT", `/internal/v1/users/${blockedOwner}`, { githubLogin: `user${blockedOwner}`, blocked: true });
    const attempts: [string | null, Record<string, string>][] = [
      [null, {}],
      [null, { Authorization: `Basic ${btoa("a:b")}` }],
      ["cbk_notakey", {}],
      [old, {}],
      [blockedKey, {}],
    ];
    for (const [key, headers] of attempts) {
      for (const method of ["initialize", "tools/list", "tools/call"]) {
        const params = method === "initialize" ? INITIALIZE : method === "tools/call" ? { name: "list_organizations" } : {};
        const { response, body } = await mcpPost(key, { jsonrpc: "2.0", id: 1, method, params }, { headers });
        expect(response.status).toBe(401);
        // Contract section 19: the challenge names the resource metadata; invalid_token when a bearer token was sent.
        const metadata = 'Bearer resource_metadata="https://service.test/.well-known/oauth-protected-resource/mcp"';
        expect(response.headers.get("WWW-Authenticate")).toBe(key === null ? metadata : `${metadata}, error="invalid_token"`);
        expect(response.headers.get("X-RateLimit-Used")).toBeNull();
        expect(body).toMatchObject({ error: { code: "unauthenticated" } });
      }
    }
  });
});

describe("tools by key kind, from the routes", () => {
  it("a cak_ key lists the analytics tools, a cbk_ key the member tools", async () => {
    const w = await world();
    expect([...(await listTools(w.analytics)).keys()].sort()).toEqual([
      "list_pull_request_analytics",
      "summarize_pull_request_analytics",
    ]);
    expect([...(await listTools(w.members)).keys()].sort()).toEqual(MEMBER_TOOLS);
    // A tool of the other kind is unknown to the key: a JSON-RPC error, nothing run.
    const { message } = await rpc(w.analytics, "tools/call", {
      name: "get_member",
      arguments: { org: w.org, githubUserId: w.owner },
    });
    expect(message?.error?.message).toMatch(/get_member not found/);
  });

  it("readOnlyHint on reads only; the guarded updates tell the agent to read first and pass what it read", async () => {
    const w = await world();
    const tools = await listTools(w.members);
    for (const [name, tool] of tools) expect(tool.annotations.readOnlyHint, name).toBe(READ_TOOLS.includes(name));
    expect((await listTools(w.analytics)).get("list_pull_request_analytics")?.annotations.readOnlyHint).toBe(true);
    for (const name of ["update_member", "update_members"]) {
      const description = tools.get(name)?.description ?? "";
      expect(description).toMatch(/read the member first \(get_member/);
      expect(description).toMatch(/expectedSeat \/ expectedRole/);
      expect(description).toMatch(/expected_value_mismatch/);
    }
  });

  it("input schemas are the routes' parameters and body, one object; output schemas the REST body", async () => {
    const w = await world();
    const tools = await listTools(w.members);
    const update = tools.get("update_member");
    expect(update?.inputSchema).toMatchObject({
      type: "object",
      required: ["org", "githubUserId"],
      additionalProperties: false,
      properties: { seat: { type: "boolean" }, expectedRole: { enum: ["member", "admin", "viewer"] } },
    });
    expect(Object.keys((update?.inputSchema.properties ?? {}) as object).sort()).toEqual(
      ["expectedRole", "expectedSeat", "githubUserId", "org", "role", "seat"].sort(),
    );
    // Query parameters keep their documented types (limit is an integer, seat a boolean).
    expect(tools.get("list_members")?.inputSchema).toMatchObject({
      properties: { limit: { type: "integer", maximum: 100 }, seat: { type: "boolean" } },
    });
    const analytics = (await listTools(w.analytics)).get("list_pull_request_analytics");
    expect(Object.keys((analytics?.inputSchema.properties ?? {}) as object)).not.toContain("format");
    expect(analytics?.outputSchema).toMatchObject({ required: ["data", "nextCursor"] });
    // Self-contained: no reference into a document the client does not have.
    expect(JSON.stringify([...tools.values()])).not.toContain("$ref");
  });
});

describe("read-only mode: /mcp/readonly or X-MCP-Readonly: true", () => {
  const modes = [{ path: "/mcp/readonly" }, { headers: { "X-MCP-Readonly": "true" } }];

  it("lists only the read tools, and every write tool is refused as unknown with no effect", async () => {
    const w = await world();
    const writes = [...(await listTools(w.members)).values()].filter((t) => !t.annotations.readOnlyHint).map((t) => t.name);
    expect(writes.sort()).toEqual(["update_member", "update_members"]);
    const args: Record<string, Record<string, unknown>> = {
      update_member: { org: w.org, githubUserId: w.member, seat: true, expectedSeat: false },
      update_members: { org: w.org, changes: [{ githubUserId: w.member, seat: true, expectedSeat: false }] },
    };
    for (const mode of modes) {
      expect([...(await listTools(w.members, mode)).keys()].sort()).toEqual(READ_TOOLS);
      for (const name of writes) {
        const { response, message } = await rpc(w.members, "tools/call", { name, arguments: args[name] }, mode);
        expect(response.status).toBe(200);
        expect(message?.error?.message).toMatch(new RegExp(`${name} not found`));
        expect(message?.result).toBeUndefined();
      }
      // Reads still work there.
      expect(
        (await callTool(w.members, "get_member", { org: w.org, githubUserId: w.member }, mode)).result.isError,
      ).toBeUndefined();
    }
    const member = await call(`/api/v1/organizations/${w.org}/members/${w.member}`, {
      headers: { Authorization: `Bearer ${w.members}` },
    });
    expect(await member.json()).toMatchObject({ seat: false });
  });

  it("X-MCP-Readonly other than true leaves every tool", async () => {
    const w = await world();
    expect([...(await listTools(w.members, { headers: { "X-MCP-Readonly": "false" } })).keys()].sort()).toEqual(MEMBER_TOOLS);
  });
});

describe("quotas: each tools/call counts once, with the headers of section 7", () => {
  it("initialize, tools/list and ping are free; a tools/call is counted, also a refused one", async () => {
    const w = await world();
    for (const method of ["initialize", "tools/list", "ping"]) {
      const { response } = await rpc(w.members, method, method === "initialize" ? INITIALIZE : {});
      expect(response.headers.get("X-RateLimit-Used"), method).toBeNull();
    }
    const first = await callTool(w.members, "list_organizations", {});
    expect(first.response.headers.get("X-RateLimit-Used")).toBe("1");
    expect(first.response.headers.get("X-RateLimit-Limit")).toBe("1000");
    expect(first.response.headers.get("RateLimit-Policy")).toBe('"default";q=1000;w=900');
    const refused = await callTool(w.members, "get_member", { org: w.org, githubUserId: "abc" });
    expect(refused.result.isError).toBe(true);
    expect(refused.response.headers.get("X-RateLimit-Used")).toBe("2");
    // The analytics quota is another one.
    const analytics = await callTool(w.analytics, "list_pull_request_analytics", { org: w.org });
    expect(analytics.response.headers.get("X-RateLimit-Used")).toBe("1");
    // And REST requests of the same owner and kind see the same counter.
    const restAnswer = await call("/api/v1/organizations", { headers: { Authorization: `Bearer ${w.members}` } });
    expect(restAnswer.headers.get("X-RateLimit-Used")).toBe("3");
  });
});
