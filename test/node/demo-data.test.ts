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
  events: Event[];
}
type Event = {
  type: string;
  org: string;
  repo: string;
  prNumber: number;
  author?: string;
  status?: string;
  createdAt?: string;
  completedAt?: string | null;
  mergedAt?: string | null;
};

const now = Date.parse("2026-11-21T12:00:00Z");
const world = demoWorld({ now }) as World;
const DAY = 86_400_000;
const MINUTE = 60_000;
const ref = (e: Event) => `${e.org}/${e.repo}#${e.prNumber}`;
const acmeMerged = () => world.events.filter((e) => e.type === "pull_request" && e.org === "acme" && e.mergedAt);

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

  it("has several hundred merged pull requests over several months, with every event type", () => {
    const merged = acmeMerged();
    expect(merged.length).toBeGreaterThanOrEqual(400);
    for (const e of merged) {
      const at = Date.parse(e.mergedAt as string);
      expect(at).toBeLessThanOrEqual(now);
      expect(at).toBeGreaterThan(now - 190 * DAY);
    }
    // Every one of the last 20 weeks has merges, and the older half of the history too.
    const weeks = new Set(merged.map((e) => Math.floor((now - Date.parse(e.mergedAt as string)) / (7 * DAY))));
    for (let week = 0; week < 20; week++) expect(weeks.has(week), `week ${week} ago`).toBe(true);
    expect(new Set(world.events.map((e) => e.type))).toEqual(new Set(["pull_request", "review", "finding", "ai_authorship"]));
  });

  it("spreads the work over several repositories and authors, none of them all of it", () => {
    const merged = acmeMerged();
    const share = (key: (e: Event) => string) => {
      const counts = new Map<string, number>();
      for (const e of merged) counts.set(key(e), (counts.get(key(e)) ?? 0) + 1);
      return [...counts.values()].map((n) => n / merged.length);
    };
    const repos = share((e) => e.repo);
    const authors = share((e) => e.author as string);
    expect(repos.length).toBeGreaterThanOrEqual(5);
    expect(authors.length).toBeGreaterThanOrEqual(6);
    expect(Math.max(...repos, ...authors)).toBeLessThan(0.5);
  });

  it("has realistic review delays: first reviews within minutes to hours, faster lately, some reviews after the merge", () => {
    const prs = world.events.filter((e) => e.type === "pull_request" && e.org === "acme");
    const firstReview = new Map<string, number>();
    const reviewedAfterMerge = new Set<string>();
    const mergedAt = new Map(prs.map((p) => [ref(p), p.mergedAt ? Date.parse(p.mergedAt) : null]));
    for (const e of world.events) {
      if (e.type !== "review" || e.status !== "completed" || e.org !== "acme") continue;
      const at = Date.parse(e.completedAt as string);
      firstReview.set(ref(e), Math.min(at, firstReview.get(ref(e)) ?? at));
      const merge = mergedAt.get(ref(e));
      if (merge != null && at > merge) reviewedAfterMerge.add(ref(e));
    }
    const delay = (p: Event) => (firstReview.get(ref(p)) as number) - Date.parse(p.createdAt as string);
    const reviewed = prs.filter((p) => firstReview.has(ref(p)));
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] as number;
    const old = reviewed.filter((p) => Date.parse(p.createdAt as string) < now - 120 * DAY).map(delay);
    const recent = reviewed.filter((p) => Date.parse(p.createdAt as string) > now - 30 * DAY).map(delay);
    expect(median(recent)).toBeGreaterThan(5 * MINUTE);
    expect(median(recent)).toBeLessThan(median(old));
    expect(median(old)).toBeLessThan(DAY);
    expect(Math.max(...reviewed.map(delay))).toBeGreaterThan(DAY);
    expect(reviewedAfterMerge.size).toBeGreaterThan(10);
  });

  it("has AI authorship for some pull requests, not all", () => {
    const withAi = new Set(world.events.filter((e) => e.type === "ai_authorship" && e.org === "acme").map(ref));
    const share = withAi.size / world.events.filter((e) => e.type === "pull_request" && e.org === "acme").length;
    expect(share).toBeGreaterThan(0.2);
    expect(share).toBeLessThan(0.7);
  });

  it("is deterministic for a seed", () => {
    expect(demoWorld({ now })).toEqual(demoWorld({ now }));
    expect(demoWorld({ now, seed: 7 })).not.toEqual(demoWorld({ now }));
  });
});
