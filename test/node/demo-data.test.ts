import { describe, expect, it } from "vitest";
import { demoWorld } from "../../scripts/lib/demo-data.mjs";
import { EventBatch, MAX_EVENTS_PER_BATCH } from "../../src/schemas/events";
import { MemberInput } from "../../src/schemas/member";
import { OrganizationInput } from "../../src/schemas/organization";
import { RepositoryInput } from "../../src/schemas/repository";

interface World {
  organizations: {
    login: string;
    body: unknown;
    members: { id: string; login: string; role: string; seat: boolean; isBot: boolean }[];
    repositories: { name: string; private: boolean; collaborators: string[] }[];
  }[];
  events: { type: string; org: string; mergedAt?: string | null }[];
}

const now = Date.parse("2026-11-21T12:00:00Z");
const world = demoWorld({ now }) as World;

describe("demo data", () => {
  it("every event passes the control plane's own validation", () => {
    for (let i = 0; i < world.events.length; i += MAX_EVENTS_PER_BATCH) {
      const result = EventBatch.safeParse({ events: world.events.slice(i, i + MAX_EVENTS_PER_BATCH) });
      expect(result.success, JSON.stringify(result.error?.issues.slice(0, 3))).toBe(true);
    }
  });

  it("every event carries a version that is not in the future", () => {
    for (const e of world.events as { updatedAt?: string }[]) {
      expect(typeof e.updatedAt).toBe("string");
      expect(Date.parse(e.updatedAt as string)).toBeLessThanOrEqual(now);
    }
  });

  it("organizations, repositories and members pass validation", () => {
    for (const org of world.organizations) {
      expect(OrganizationInput.safeParse(org.body).success).toBe(true);
      for (const repo of org.repositories) {
        expect(RepositoryInput.safeParse({ private: repo.private, collaborators: repo.collaborators }).success).toBe(true);
      }
      for (const m of org.members) {
        const body = {
          githubLogin: m.login,
          workEmail: `${m.login.replace(/\[bot\]$/, "")}@example.com`,
          role: m.role,
          seat: m.seat,
          isBot: m.isBot,
        };
        expect(MemberInput.safeParse(body).success).toBe(true);
      }
    }
  });

  it("has a Pro organization with members of every role and a bot, and a Team organization", () => {
    const plans = world.organizations.map((o) => (o.body as { plan: string }).plan);
    expect(plans).toEqual(expect.arrayContaining(["pro", "team"]));
    const pro = world.organizations.find((o) => (o.body as { plan: string }).plan === "pro");
    expect(new Set(pro?.members.map((m) => m.role))).toEqual(new Set(["admin", "member", "viewer"]));
    expect(pro?.members.some((m) => m.isBot)).toBe(true);
    expect(pro?.repositories.some((r) => r.private)).toBe(true);
    expect(pro?.repositories.length).toBeGreaterThanOrEqual(3);
  });

  it("has a few hundred merged pull requests over the last 90 days, with every event type", () => {
    const merged = world.events.filter((e) => e.type === "pull_request" && e.mergedAt);
    expect(merged.length).toBeGreaterThanOrEqual(200);
    for (const e of merged) {
      const at = Date.parse(e.mergedAt as string);
      expect(at).toBeLessThanOrEqual(now);
      expect(at).toBeGreaterThan(now - 97 * 86_400_000);
    }
    expect(new Set(world.events.map((e) => e.type))).toEqual(new Set(["pull_request", "review", "finding", "ai_authorship"]));
  });

  it("is deterministic for a seed", () => {
    expect(demoWorld({ now })).toEqual(demoWorld({ now }));
    expect(demoWorld({ now, seed: 7 })).not.toEqual(demoWorld({ now }));
  });
});
