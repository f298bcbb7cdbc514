import DEMO_USERS from "../../src/app/demo-users.json" with { type: "json" };
import { seededRandom } from "./random.mjs";

const DAY = 86_400_000;
const HOUR = 3_600_000;

/**
 * The demo world `npm start` and `npm run seed` load: a Pro organization with several
 * repositories (public and private), members of every role including a bot, a few hundred merged
 * pull requests with reviews, findings and AI-authorship records over the last 90 days, and a
 * Team organization. Deterministic for a given seed and `now`.
 */
export function demoWorld({ now = Date.now(), seed = 42, pullRequests = 300 } = {}) {
  const rnd = seededRandom(seed);
  const iso = (ms) => new Date(ms).toISOString();

  const users = DEMO_USERS;

  const organizations = [
    {
      login: "acme",
      body: {
        installationId: 4100001,
        installedAt: iso(now - 400 * DAY),
        plan: "pro",
        subscription: { status: "active", billedThroughService: true, purchasedSeats: 5 },
      },
      members: users,
      repositories: [
        { name: "api", private: false, collaborators: [] },
        { name: "web", private: false, collaborators: [] },
        { name: "infra", private: true, collaborators: ["1002"] },
        { name: "billing", private: true, collaborators: [] },
      ],
    },
    {
      login: "globex",
      body: {
        installationId: 4100002,
        installedAt: iso(now - 20 * DAY),
        plan: "team",
        subscription: { status: "active", billedThroughService: true, purchasedSeats: 3 },
      },
      members: [
        { id: "1001", login: "ada-admin", role: "admin", seat: true, isBot: false },
        { id: "2001", login: "gus-member", role: "member", seat: true, isBot: false },
      ],
      repositories: [{ name: "platform", private: false, collaborators: [] }],
    },
  ];

  const authors = ["ada-admin", "max-member", "sam-member", "lin-member", "dependabot[bot]"];
  const events = [];
  const perRepo = new Map();
  const emit = (org, repos, count) => {
    for (let i = 0; i < count; i++) {
      const repo = rnd.pick(repos);
      const prNumber = (perRepo.get(`${org}/${repo}`) ?? 0) + 1;
      perRepo.set(`${org}/${repo}`, prNumber);
      const createdAt = now - rnd.int(1 * HOUR, 90 * DAY);
      const merged = rnd.chance(0.85);
      const mergeAt = createdAt + rnd.int(HOUR, 6 * DAY);
      // A pull request whose merge would lie in the future is still open.
      const mergedAt = merged && mergeAt < now ? mergeAt : null;
      const unknownSize = rnd.chance(0.03);
      const linesAdded = unknownSize ? null : rnd.int(1, 800);
      const linesDeleted = unknownSize ? null : rnd.int(0, 300);
      const ref = { org, repo, prNumber };
      // Versions: the source's time of the state each event reports (never in the future).
      const prUpdatedAt = iso(mergedAt ?? createdAt);
      events.push({
        type: "pull_request",
        ...ref,
        author: rnd.pick(authors),
        createdAt: iso(createdAt),
        mergedAt: mergedAt === null ? null : iso(mergedAt),
        linesAdded,
        linesDeleted,
        updatedAt: prUpdatedAt,
      });

      const reviewCount = rnd.int(0, 3);
      for (let r = 0; r < reviewCount; r++) {
        // Most reviews complete before the merge; some come after it (re-reviews, late runs).
        // One that would complete in the future is still running.
        const completedAt = createdAt + rnd.int(5 * 60_000, 7 * DAY);
        const status = completedAt >= now ? "in_progress" : rnd.chance(0.85) ? "completed" : rnd.pick(["failed", "in_progress"]);
        events.push({
          type: "review",
          ...ref,
          reviewId: `${org}-${repo}-${prNumber}-r${r}`,
          status,
          completedAt: status === "completed" ? iso(completedAt) : null,
          updatedAt: iso(Math.min(completedAt, now)),
        });
      }
      const findingCount = reviewCount === 0 ? 0 : rnd.int(0, 8);
      for (let f = 0; f < findingCount; f++) {
        const findingAt = createdAt + rnd.int(10 * 60_000, 3 * DAY);
        if (findingAt >= now) continue;
        events.push({
          type: "finding",
          ...ref,
          findingId: `${org}-${repo}-${prNumber}-f${f}`,
          createdAt: iso(findingAt),
          posted: rnd.chance(0.9),
          aiAddressed: rnd.chance(0.45),
          feedback: rnd.chance(0.7) ? null : rnd.pick(["positive", "negative"]),
          updatedAt: iso(findingAt),
        });
      }
      if (rnd.chance(0.6)) {
        const sources = rnd.int(1, 3);
        for (let s = 0; s < sources; s++) {
          events.push({
            type: "ai_authorship",
            ...ref,
            sourceId: `${org}-${repo}-${prNumber}-ai${s}`,
            lines: rnd.int(0, 400),
            updatedAt: prUpdatedAt,
          });
        }
      }
    }
  };
  emit("acme", ["api", "web", "infra", "billing"], pullRequests);
  emit("globex", ["platform"], Math.max(10, Math.floor(pullRequests / 10)));

  return {
    organizations,
    users: [...new Map([...organizations.flatMap((o) => o.members)].map((m) => [m.id, m])).values()],
    events,
    /** Whose keys `npm start` prints: an admin of acme, for both interfaces. */
    keyOwner: "1001",
  };
}
