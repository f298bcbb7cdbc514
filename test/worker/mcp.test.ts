import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MCP_TOOL_NAMES } from "../../src/mcp/tools";
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

/** The names a key lists (the tools module's `MCP_TOOL_NAMES`, split by key kind). */
const names = async (key: string, options = {}) => [...(await listTools(key, options)).keys()].sort();

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
  it("a cak_ key lists the analytics tools, a cbk_ key the member tools: each tool of the tools module for one kind", async () => {
    const w = await world();
    const analytics = await names(w.analytics);
    const members = await names(w.members);
    expect([...analytics, ...members].sort()).toEqual([...MCP_TOOL_NAMES].sort());
    expect(analytics.filter((name) => members.includes(name))).toEqual([]);
    expect(analytics).toEqual(expect.arrayContaining(["list_pull_request_analytics", "summarize_pull_request_analytics"]));
    expect(members).toEqual(expect.arrayContaining(["get_member", "list_members", "update_member", "update_members"]));
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
    for (const name of ["get_member", "list_members", "list_organizations", "read_audit_log"]) {
      expect(tools.get(name)?.annotations.readOnlyHint, name).toBe(true);
    }
    for (const name of ["update_member", "update_members"]) expect(tools.get(name)?.annotations.readOnlyHint, name).toBe(false);
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
    const all = [...(await listTools(w.members)).values()];
    const reads = all.filter((t) => t.annotations.readOnlyHint).map((t) => t.name);
    const writes = all.filter((t) => !t.annotations.readOnlyHint).map((t) => t.name);
    expect(writes).toEqual(expect.arrayContaining(["update_member", "update_members"]));
    const args: Record<string, Record<string, unknown>> = {
      update_member: { org: w.org, githubUserId: w.member, seat: true, expectedSeat: false },
      update_members: { org: w.org, changes: [{ githubUserId: w.member, seat: true, expectedSeat: false }] },
    };
    for (const mode of modes) {
      expect(await names(w.members, mode)).toEqual(reads.sort());
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
    const every = await names(w.members);
    expect(every).toContain("update_member");
    expect(await names(w.members, { headers: { "X-MCP-Readonly": "false" } })).toEqual(every);
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

describe("section 15: annotations, titles, capabilities", () => {
  const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
  const WRITE = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false };

  it("every tool has a title and exactly section 15's annotations; reads are read-only, the member updates destructive", async () => {
    const w = await world();
    const tools = [...(await listTools(w.members)).values(), ...(await listTools(w.analytics)).values()];
    expect(tools.map((t) => t.name).sort()).toEqual([...MCP_TOOL_NAMES].sort());
    for (const tool of tools) {
      expect(typeof tool.title === "string" && tool.title.length > 0, tool.name).toBe(true);
      expect(tool.annotations, tool.name).toEqual(tool.annotations.readOnlyHint ? READ : WRITE);
    }
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const name of ["update_member", "update_members"]) expect(byName.get(name)?.annotations).toEqual(WRITE);
    for (const name of ["get_member", "list_members", "list_organizations", "read_audit_log", "list_pull_request_analytics"]) {
      expect(byName.get(name)?.annotations).toEqual(READ);
    }
  });

  it("tools.listChanged is not advertised: the server never sends that notification", async () => {
    const w = await world();
    const init = await rpc(w.members, "initialize", INITIALIZE);
    const capabilities = init.message?.result?.capabilities as { tools?: { listChanged?: boolean } };
    expect(capabilities.tools).toBeDefined();
    expect(capabilities.tools?.listChanged).not.toBe(true);
  });
});

describe("section 15: only a tools/call the server runs counts", () => {
  const call = (id: number | undefined) => ({
    jsonrpc: "2.0",
    ...(id === undefined ? {} : { id }),
    method: "tools/call",
    params: { name: "list_organizations", arguments: {} },
  });
  /** The owner's count so far, read from a counted call (which adds one). */
  const usedAfterOneMore = async (key: string) =>
    Number((await callTool(key, "list_organizations", {})).response.headers.get("X-RateLimit-Used"));

  it("a call the server answers counts, also one naming a tool this key does not have", async () => {
    const w = await world();
    const unknown = await rpc(w.analytics, "tools/call", {
      name: "get_member",
      arguments: { org: w.org, githubUserId: w.owner },
    });
    expect(unknown.message?.error?.message).toMatch(/get_member not found/);
    expect(unknown.response.headers.get("X-RateLimit-Used")).toBe("1");
    const next = await callTool(w.analytics, "list_pull_request_analytics", { org: w.org });
    expect(next.response.headers.get("X-RateLimit-Used")).toBe("2");
  });

  it("under 2026-07-28 too: a call run counts; one whose Mcp-Name header contradicts its body (400) is free", async () => {
    const w = await world();
    const META = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientInfo": { name: "worker-test", version: "1.0.0" },
      "io.modelcontextprotocol/clientCapabilities": {},
    };
    const modern = (name: string) => ({
      headers: { "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name },
    });
    const payload = {
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "list_organizations", arguments: {}, _meta: META },
    };
    const mismatched = await mcpPost(w.members, payload, modern("get_member"));
    expect(mismatched.response.status).toBe(400);
    expect(mismatched.response.headers.get("X-RateLimit-Used")).toBeNull();
    const run = await mcpPost(w.members, payload, modern("list_organizations"));
    expect(run.response.status).toBe(200);
    expect(run.message?.result).toMatchObject({ structuredContent: { data: [{ org: w.org }] } });
    expect(run.response.headers.get("X-RateLimit-Used")).toBe("1");
  });

  it("a notification (no id) is answered 202, never run, and free", async () => {
    const w = await world();
    const { response } = await mcpPost(w.members, call(undefined), { headers: { "MCP-Protocol-Version": "2025-06-18" } });
    expect(response.status).toBe(202);
    expect(response.headers.get("X-RateLimit-Used")).toBeNull();
    expect(await usedAfterOneMore(w.members)).toBe(1);
  });

  it("requests the transport refuses are free: a foreign Origin (403), a bad protocol version (400), a wrong Accept (406)", async () => {
    const w = await world();
    const refused: [Record<string, string>, number][] = [
      [{ Origin: "https://evil.example" }, 403],
      [{ "MCP-Protocol-Version": "1999-01-01" }, 400],
      [{ Accept: "text/html" }, 406],
    ];
    for (const [headers, status] of refused) {
      const { response } = await mcpPost(w.members, call(1), { headers });
      expect(response.status, JSON.stringify(headers)).toBe(status);
      expect(response.headers.get("X-RateLimit-Used"), JSON.stringify(headers)).toBeNull();
    }
    expect(await usedAfterOneMore(w.members)).toBe(1);
  });

  it("a JSON-RPC batch is 400 with -32600 under every protocol version, never the members envelope, and free", async () => {
    const w = await world();
    for (const version of [null, "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]) {
      const request = new Request("https://service.test/mcp", {
        method: "POST",
        headers: {
          Authorization: `Bearer ${w.members}`,
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
          ...(version === null ? {} : { "MCP-Protocol-Version": version }),
        },
        body: JSON.stringify([call(1), call(2)]),
      });
      const response = await exports.default.fetch(request);
      expect(response.status, String(version)).toBe(400);
      expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
      expect(response.headers.get("X-RateLimit-Used")).toBeNull();
      expect(await response.json()).toEqual({
        jsonrpc: "2.0",
        error: { code: -32600, message: "batches are not supported" },
        id: null,
      });
    }
    expect(await usedAfterOneMore(w.members)).toBe(1);
  });
});

describe("one server per request: concurrent requests never share one", () => {
  it("requests of different keys, organizations, modes and methods at once each get their own answer, the same as alone", async () => {
    const [a, b] = [await world(), await world()];
    const get = (key: string, org: string, githubUserId: string, options = {}) =>
      callTool(key, "get_member", { org, githubUserId }, options).then(({ result }) => result);
    // Each exchange, and what it answers when it runs alone.
    const exchanges: { name: string; run: () => Promise<unknown> }[] = [
      { name: "a's member", run: () => get(a.members, a.org, a.member) },
      { name: "b's owner", run: () => get(b.members, b.org, b.owner) },
      { name: "a's key in b", run: () => get(a.members, b.org, b.member) },
      { name: "b's member, read-only", run: () => get(b.members, b.org, b.member, { path: "/mcp/readonly" }) },
      {
        name: "a write refused as unknown in read-only mode",
        run: () =>
          rpc(
            a.members,
            "tools/call",
            { name: "update_member", arguments: { org: a.org, githubUserId: a.member } },
            {
              path: "/mcp/readonly",
            },
          ).then(({ message }) => message?.error?.message),
      },
      {
        name: "a member tool on an analytics key",
        run: () => rpc(b.analytics, "tools/call", { name: "get_member" }).then(({ message }) => message?.error?.message),
      },
      { name: "a's analytics tools", run: () => names(a.analytics) },
      { name: "b's read-only member tools", run: () => names(b.members, { path: "/mcp/readonly" }) },
      { name: "b's member tools", run: () => names(b.members) },
      {
        name: "a's analytics page",
        run: () => callTool(a.analytics, "list_pull_request_analytics", { org: a.org }).then(({ result }) => result),
      },
    ];
    const alone: unknown[] = [];
    for (const exchange of exchanges) alone.push(await exchange.run());

    // What each answers alone is its own: the members asked for, the refusals, the tool lists.
    const structured = (i: number) => (alone[i] as { structuredContent?: Record<string, unknown> }).structuredContent;
    expect(structured(0)).toMatchObject({ githubUserId: a.member, role: "member" });
    expect(structured(1)).toMatchObject({ githubUserId: b.owner, role: "admin" });
    expect((alone[2] as { isError?: boolean }).isError).toBe(true);
    expect(structured(3)).toMatchObject({ githubUserId: b.member, role: "member" });
    expect(alone[4]).toMatch(/update_member not found/);
    expect(alone[5]).toMatch(/get_member not found/);
    expect(alone[6]).toEqual(["list_pull_request_analytics", "summarize_pull_request_analytics"]);
    expect(alone[7]).not.toContain("update_member");
    expect(alone[8]).toContain("update_member");
    expect(structured(9)).toEqual({ data: [], nextCursor: null });

    // All at once, three times over (in changing orders): every answer is the one it gave alone.
    for (let round = 0; round < 3; round++) {
      const order = exchanges.map((_, i) => (i * ([1, 3, 7][round] as number)) % exchanges.length);
      expect(new Set(order).size).toBe(exchanges.length);
      const answers = await Promise.all(order.map((i) => (exchanges[i] as (typeof exchanges)[number]).run()));
      expect(answers.map((answer, at) => [exchanges[order[at] as number]?.name, answer])).toEqual(
        order.map((i) => [exchanges[i]?.name, alone[i]]),
      );
    }
  });
});
