import { describe, expect, it } from "vitest";
import { keyReport } from "../../scripts/lib/seed.mjs";

/** What `npm start` prints after loading the demo data on a first run (issue 27, a newcomer's first hour). */
describe("the first run's key report", () => {
  const keys = {
    analyticsKey: "cak_a",
    membersKey: "cbk_m",
    owner: { login: "ada-admin" },
    organizationKey: { org: "acme", name: "seat-sync", key: "cbk_o" },
  };

  it("names the whole working command for new keys: this run's URL and admin token, as the restart message does", () => {
    const report = keyReport("http://127.0.0.1:9301/", keys, { app: true, adminToken: "run-token-0123456789abcdef0123456789" });
    const hint = report.split("\n").find((line) => line.includes("--keys-only")) ?? "";
    expect(hint).toContain(
      "npm run seed -- --keys-only --url http://127.0.0.1:9301 --admin-token run-token-0123456789abcdef0123456789",
    );
  });

  it("without the token at hand (npm run seed), says where the token goes instead of a command that exits 2", () => {
    const report = keyReport("http://127.0.0.1:8787", keys, {});
    const hint = report.split("\n").find((line) => line.includes("--keys-only")) ?? "";
    expect(hint).toContain("npm run seed -- --keys-only --url http://127.0.0.1:8787 --admin-token <ADMIN_TOKEN>");
  });

  it("shows the demo organization key (contract section 18): its organization, its name, and a call made with it", () => {
    const lines = keyReport("http://127.0.0.1:8787", keys, {}).split("\n");
    expect(lines).toContain(
      "  ORG_MEMBERS_API_KEY=cbk_o   (organization key seat-sync of acme: belongs to acme, not to a person)",
    );
    expect(lines).toContain(
      '  curl -s -H "Authorization: Bearer cbk_o" "http://127.0.0.1:8787/api/v1/organizations/acme/members?seat=true&limit=5"',
    );
  });
});
