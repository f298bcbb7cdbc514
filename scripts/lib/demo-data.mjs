import DEMO_USERS from "../../src/app/demo-users.json" with { type: "json" };
import { seededRandom } from "./random.mjs";

const DAY = 86_400_000;
const HOUR = 3_600_000;

/** Acme members whose last pull request is months old; both hold a seat at first. */
const IDLE_MEMBERS = [
  { id: "1007", login: "olga-oldtimer", role: "member", seat: true, isBot: false, idleDays: 170 },
  { id: "1008", login: "ivy-idle", role: "member", seat: true, isBot: false, idleDays: 120 },
];
/** A member without a seat whose first pull request finds every seat taken: the waiting list. */
const NEW_HIRE = { id: "1009", login: "nia-newhire", role: "member", seat: false, isBot: false };

/**
 * The demo world `npm start` and `npm run seed` load: a Pro organization with several
 * repositories (public and private), members of every role including a bot, about 600 merged pull
 * requests with reviews, findings and AI-authorship records over the last six months, and a Team
 * organization. Shaped so the analytics dashboard has something to show: activity that grows
 * toward today with quiet weekends and one holiday week, repositories and authors of different
 * sizes, first reviews that take hours at first and minutes later (log-normal delays, a few
 * re-reviews after the merge), and AI authorship on a growing share of pull requests.
 * Deterministic for a given seed and `now`.
 */
export function demoWorld({ now = Date.now(), seed = 42, pullRequests = 600 } = {}) {
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
      // Two seat holders idle for months (contract section 20: the members page frees their seats).
      members: [...users, ...IDLE_MEMBERS.map(({ idleDays, ...m }) => m), { ...NEW_HIRE }],
      repositories: [
        { name: "api", private: false, collaborators: [] },
        { name: "web", private: false, collaborators: [] },
        { name: "mobile", private: false, collaborators: [] },
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

  const HISTORY_DAYS = 180;
  /** A log-normal delay: `median` ms, spread by `sigma` (natural log units). */
  const logNormal = (median, sigma) => {
    const u = Math.max(rnd.next(), 1e-9);
    const normal = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rnd.next());
    return Math.round(median * Math.exp(sigma * normal));
  };
  const weighted = (pairs) => {
    let x = rnd.next() * pairs.reduce((n, [, w]) => n + w, 0);
    for (const [value, w] of pairs) {
      x -= w;
      if (x < 0) return value;
    }
    return pairs[pairs.length - 1][0];
  };
  /** How long ago a pull request was opened: more recent ones are likelier, weekends and one holiday week are quiet. */
  const openedAgo = () => {
    for (;;) {
      const age = HISTORY_DAYS * DAY * (1 - Math.sqrt(rnd.next()));
      const day = new Date(now - age).getUTCDay();
      const weekend = day === 0 || day === 6;
      const holiday = age > 49 * DAY && age < 57 * DAY;
      if ((weekend && rnd.chance(0.75)) || (holiday && rnd.chance(0.85))) continue;
      return Math.max(age, HOUR);
    }
  };
  const authors = [
    ["max-member", 25],
    ["sam-member", 20],
    ["ada-admin", 14],
    ["lin-member", 14],
    ["kim-contractor", 9],
    ["jo-intern", 6],
    ["dependabot[bot]", 12],
  ];
  const events = [];
  const perRepo = new Map();
  const emit = (org, repos, count) => {
    for (let i = 0; i < count; i++) {
      const repo = weighted(repos);
      const prNumber = (perRepo.get(`${org}/${repo}`) ?? 0) + 1;
      perRepo.set(`${org}/${repo}`, prNumber);
      const createdAt = now - openedAgo();
      // 0 six months ago, 1 today: adoption of the reviewer and of AI tools grows over the history.
      const progress = 1 - (now - createdAt) / (HISTORY_DAYS * DAY);
      const author = weighted(authors);
      const bot = author.endsWith("[bot]");
      const unknownSize = rnd.chance(0.03);
      const linesAdded = unknownSize ? null : bot ? rnd.int(1, 40) : Math.min(3000, logNormal(120, 1.1));
      const linesDeleted = unknownSize ? null : bot ? rnd.int(1, 40) : Math.min(2000, logNormal(35, 1.2));
      // First review: hours at first, tens of minutes lately; merge most often within a day or two of it.
      const firstReviewAt = createdAt + Math.max(60_000, logNormal(6 * HOUR - progress * 5.25 * HOUR, 1));
      const mergeAt = firstReviewAt + Math.max(10 * 60_000, bot ? logNormal(2 * HOUR, 0.8) : logNormal(20 * HOUR, 1.1));
      // A pull request whose merge would lie in the future is still open; some are never merged.
      const mergedAt = rnd.chance(0.9) && mergeAt < now ? mergeAt : null;
      const ref = { org, repo, prNumber };
      // Versions: the source's time of the state each event reports (never in the future).
      const prUpdatedAt = iso(mergedAt ?? createdAt);
      events.push({
        type: "pull_request",
        ...ref,
        author,
        createdAt: iso(createdAt),
        mergedAt: mergedAt === null ? null : iso(mergedAt),
        linesAdded,
        linesDeleted,
        updatedAt: prUpdatedAt,
      });

      // The first review, then re-reviews after pushes; one in ten comes after the merge (a late run).
      const reviewTimes = [firstReviewAt];
      for (let r = rnd.int(0, 2); r > 0; r--) reviewTimes.push(reviewTimes.at(-1) + logNormal(5 * HOUR, 1));
      if (mergedAt !== null && rnd.chance(0.1)) reviewTimes.push(mergedAt + logNormal(3 * HOUR, 1.5));
      for (const [r, completedAt] of reviewTimes.entries()) {
        // One that would complete in the future is still running.
        const status = completedAt >= now ? "in_progress" : rnd.chance(0.92) ? "completed" : rnd.pick(["failed", "in_progress"]);
        events.push({
          type: "review",
          ...ref,
          reviewId: `${org}-${repo}-${prNumber}-r${r}`,
          status,
          completedAt: status === "completed" ? iso(completedAt) : null,
          updatedAt: iso(Math.min(completedAt, now)),
        });
      }
      // Findings grow with the size of the change; more of them get fixed by AI as adoption grows.
      const changed = (linesAdded ?? 100) + (linesDeleted ?? 0);
      const findingCount = bot ? rnd.int(0, 1) : rnd.int(0, Math.min(12, 1 + Math.ceil(changed / 120)));
      for (let f = 0; f < findingCount; f++) {
        const findingAt = firstReviewAt + rnd.int(0, 10 * 60_000) + (f % 2) * logNormal(5 * HOUR, 1);
        if (findingAt >= now) continue;
        events.push({
          type: "finding",
          ...ref,
          findingId: `${org}-${repo}-${prNumber}-f${f}`,
          createdAt: iso(findingAt),
          posted: rnd.chance(0.9),
          aiAddressed: rnd.chance(0.3 + 0.3 * progress),
          feedback: rnd.chance(0.7) ? null : rnd.pick(["positive", "negative"]),
          updatedAt: iso(findingAt),
        });
      }
      // AI authorship on 15% of pull requests six months ago, 55% today; a record may overstate
      // the lines (the export caps it at the changed lines).
      if (!bot && rnd.chance(0.15 + 0.4 * progress)) {
        const sources = rnd.int(1, 2);
        for (let s = 0; s < sources; s++) {
          events.push({
            type: "ai_authorship",
            ...ref,
            sourceId: `${org}-${repo}-${prNumber}-ai${s}`,
            lines: Math.round((changed * rnd.int(5, 60)) / 100 / sources) + (rnd.chance(0.05) ? 500 : 0),
            updatedAt: prUpdatedAt,
          });
        }
      }
    }
  };
  emit(
    "acme",
    [
      ["api", 35],
      ["web", 28],
      ["mobile", 15],
      ["infra", 13],
      ["billing", 9],
    ],
    pullRequests,
  );
  emit("globex", [["platform", 1]], Math.max(10, Math.floor(pullRequests / 10)));
  // The idle members' last pull requests, months ago.
  for (const m of IDLE_MEMBERS) {
    const prNumber = (perRepo.get("acme/api") ?? 0) + 1;
    perRepo.set("acme/api", prNumber);
    const createdAt = now - m.idleDays * DAY;
    const mergedAt = iso(createdAt + HOUR);
    const ref = { org: "acme", repo: "api", prNumber };
    events.push({
      type: "pull_request",
      ...ref,
      author: m.login,
      createdAt: iso(createdAt),
      mergedAt,
      linesAdded: 40,
      linesDeleted: 4,
      updatedAt: mergedAt,
    });
  }
  // The new hire's first pull request, sent once acme assigns seats automatically while all are taken.
  const newHirePr = (perRepo.get("acme/web") ?? 0) + 1;
  const waiting = {
    org: "acme",
    events: [
      {
        type: "pull_request",
        org: "acme",
        repo: "web",
        prNumber: newHirePr,
        author: NEW_HIRE.login,
        createdAt: iso(now - 2 * HOUR),
        mergedAt: null,
        linesAdded: 25,
        linesDeleted: 1,
        updatedAt: iso(now - 2 * HOUR),
      },
    ],
    // Then one idle member's seat goes (as a sync would say), so the demo has a seat to give.
    seatReleased: IDLE_MEMBERS[1].id,
  };

  return {
    organizations,
    users: [...new Map([...organizations.flatMap((o) => o.members)].map((m) => [m.id, m])).values()],
    events,
    /** Acme turns automatic seat assignment on after the history; then these arrive (`seed.mjs`). */
    waiting,
    /** Whose keys `npm start` prints: an admin of acme, for both interfaces. */
    keyOwner: "1001",
    /** The named organization key `npm start` prints (contract section 18): a members key of acme's own. */
    organizationKey: { org: "acme", name: "seat-sync" },
  };
}
