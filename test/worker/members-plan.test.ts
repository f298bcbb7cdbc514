import { runInDurableObject } from "cloudflare:test";
import { drizzle } from "drizzle-orm/durable-sqlite";
import { describe, expect, it } from "vitest";
import type { OrganizationObject } from "../../src/organization/object";
import * as schema from "../../src/organization/schema";
import { type MemberFilters, memberPageQuery } from "../../src/organization/store/members";
import { createOrg, env, unique } from "./helpers";

/** The member list walks members_by_login from the cursor: no sort, whatever the filters. */
describe("member list query plan", () => {
  it.each<[string, Partial<MemberFilters>]>([
    ["first page", {}],
    ["from a cursor", { after: { loginKey: "m-login", githubUserId: "123" } }],
    ["role and seat filters", { role: "admin", seat: true }],
    ["search", { search: "ma" }],
  ])("%s", async (_name, filters) => {
    const org = await createOrg(unique("plan"));
    const plan = await runInDurableObject(env.ORGANIZATIONS.getByName(org.toLowerCase()), (_: OrganizationObject, state) => {
      const { sql, params } = memberPageQuery(drizzle(state.storage, { schema }), { limit: 100, ...filters }).toSQL();
      return [...state.storage.sql.exec(`EXPLAIN QUERY PLAN ${sql}`, ...params)].map((r) => String(r.detail));
    });
    expect(plan.join("\n")).toContain("USING INDEX members_by_login");
    expect(plan.join("\n")).not.toContain("TEMP B-TREE");
  });
});
