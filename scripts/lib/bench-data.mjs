import { DatabaseSync } from "node:sqlite";
import { refreshPullRequestFiguresSql } from "../../src/storage/pull-request-figures.ts";
import { refreshReviewSpansSql } from "../../src/storage/review-span.ts";
import { seededRandom } from "./random.mjs";

const DAY = 86_400_000;
const MIN = 60_000;
const HOUR = 3_600_000;

export const FULL = { repos: 200, pullRequests: 300_000, reviewsPerPr: 3, findingsPerPr: 10, smallOrgs: 50, smallOrgPrs: 200 };
export const SMOKE = { repos: 5, pullRequests: 3_000, reviewsPerPr: 3, findingsPerPr: 10, smallOrgs: 3, smallOrgPrs: 50 };

/**
 * Fills a migrated local D1 file with an analytics data set at scale, through the same schema the
 * Worker uses: one big organization (`bigco`) and `smallOrgs` small ones (`small-00`...), two years
 * of pull requests ending at `now`, 3 reviews and 10 findings per pull request on average,
 * AI authorship for half of them. Every row carries its version (`updated_at`) as the event write
 * path would store it, and every pull request its review span and figures (the write path's own
 * statements).
 * bigco also holds the two outliers of `poisonPullRequests`. Indexes are dropped during the load and
 * rebuilt after it (much faster than maintaining them row by row).
 */
export function generate(file, { spec, now, seed = 7, log = console.log }) {
  const db = new DatabaseSync(file);
  const rnd = seededRandom(seed);
  db.exec("PRAGMA synchronous = OFF");
  const indexes = db
    .prepare(
      "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN ('pull_requests', 'reviews', 'findings', 'ai_authorship')",
    )
    .all();
  for (const { name } of indexes) db.exec(`DROP INDEX "${name}"`);
  for (const t of ["pull_requests", "reviews", "findings", "ai_authorship"]) db.exec(`DELETE FROM ${t}`);

  const insertPr = db.prepare(
    "INSERT INTO pull_requests (id, org_key, repo_key, pr_number, repo, author, created_at, merged_at, lines_added, lines_deleted, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const insertReview = db.prepare(
    "INSERT INTO reviews (org_key, review_id, pr_id, status, completed_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
  );
  const insertFinding = db.prepare(
    "INSERT INTO findings (org_key, finding_id, pr_id, created_at, posted, ai_addressed, feedback, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const insertAi = db.prepare("INSERT INTO ai_authorship (org_key, source_id, pr_id, lines, updated_at) VALUES (?, ?, ?, ?, ?)");

  const counts = { pullRequests: 0, reviews: 0, findings: 0, ai: 0 };
  let id = 0;
  const span = 730 * DAY;
  const started = Date.now();

  // The data is written straight into DB's file: its organizations are placed there (contract
  // section 16), as the Worker would record them, so no first sight places them elsewhere.
  const place = db.prepare(
    "INSERT INTO analytics_placements (home_key, shard) VALUES (?, 'DB') ON CONFLICT (home_key) DO NOTHING",
  );
  const org = (orgKey, repos, prs) => {
    const numbers = new Map();
    place.run(orgKey);
    db.exec("BEGIN");
    for (let i = 0; i < prs; i++) {
      id++;
      const repo = repos[rnd.int(0, repos.length - 1)];
      const prNumber = (numbers.get(repo) ?? 0) + 1;
      numbers.set(repo, prNumber);
      // Ids roughly follow creation time, as they do when pull requests arrive as they happen.
      const createdAt = now - span + Math.floor((i / prs) * span) + rnd.int(0, 6 * 3_600_000);
      let mergedAt = rnd.chance(0.95) ? createdAt + rnd.int(10 * MIN, 5 * DAY) : null;
      if (mergedAt !== null && mergedAt > now) mergedAt = null;
      const added = rnd.chance(0.02) ? null : rnd.int(1, 900);
      const deleted = rnd.chance(0.02) ? null : rnd.int(0, 400);
      // Versions: the time of the state each row holds (the merge, or the creation of an open one).
      const prVersion = mergedAt ?? createdAt;
      insertPr.run(id, orgKey, repo, prNumber, repo, `dev${rnd.int(1, 400)}`, createdAt, mergedAt, added, deleted, prVersion);
      counts.pullRequests++;

      for (let r = 0; r < spec.reviewsPerPr; r++) {
        const completed = rnd.chance(0.9);
        let at = createdAt + rnd.int(5 * MIN, 2 * DAY);
        // One review in ten completes after the merge (re-reviews), up to a week later.
        if (mergedAt !== null && rnd.chance(0.1)) at = mergedAt + rnd.int(0, 7 * DAY);
        insertReview.run(
          orgKey,
          `r${id}-${r}`,
          id,
          completed ? "completed" : rnd.chance(0.5) ? "failed" : "in_progress",
          completed ? Math.min(at, now) : null,
          Math.min(at, now),
        );
        counts.reviews++;
      }
      for (let f = 0; f < spec.findingsPerPr; f++) {
        const feedback = rnd.chance(0.75) ? null : rnd.chance(0.6) ? "positive" : "negative";
        const findingAt = Math.min(now, createdAt + rnd.int(10 * MIN, 3 * DAY));
        insertFinding.run(
          orgKey,
          `f${id}-${f}`,
          id,
          findingAt,
          rnd.chance(0.9) ? 1 : 0,
          rnd.chance(0.4) ? 1 : 0,
          feedback,
          findingAt,
        );
        counts.findings++;
      }
      if (i % 2 === 0) {
        const records = rnd.int(1, 2);
        for (let a = 0; a < records; a++) {
          insertAi.run(orgKey, `a${id}-${a}`, id, rnd.int(0, 600), prVersion);
          counts.ai++;
        }
      }
      if (i > 0 && i % 25_000 === 0) {
        db.exec("COMMIT");
        db.exec("BEGIN");
        log(
          `  ${orgKey}: ${i.toLocaleString("en")} / ${prs.toLocaleString("en")} pull requests (${((Date.now() - started) / 1000).toFixed(0)} s)`,
        );
      }
    }
    db.exec("COMMIT");
  };

  const bigRepos = Array.from({ length: spec.repos }, (_, i) => `repo-${String(i).padStart(3, "0")}`);
  log(`Generating bigco: ${spec.pullRequests.toLocaleString("en")} pull requests in ${spec.repos} repositories...`);
  org("bigco", bigRepos, spec.pullRequests);
  for (const poison of poisonPullRequests(now)) {
    id++;
    const { prNumber, createdAt, mergedAt, reviewedAt } = poison;
    insertPr.run(id, "bigco", "repo-000", prNumber, "repo-000", "dev1", createdAt, mergedAt, 10, 2, mergedAt);
    insertReview.run("bigco", `r${id}-0`, id, "completed", reviewedAt, reviewedAt);
    counts.pullRequests++;
    counts.reviews++;
  }
  log(`Generating ${spec.smallOrgs} small organizations...`);
  for (let s = 0; s < spec.smallOrgs; s++) org(smallOrg(s), ["app", "lib", "docs"], spec.smallOrgPrs);

  // The review spans and figures need the children's indexes; the pull requests' indexes are
  // cheaper built after.
  log(`Rebuilding ${indexes.length} indexes and computing review spans and figures...`);
  const [prIndexes, otherIndexes] = [
    indexes.filter((i) => i.tbl_name === "pull_requests"),
    indexes.filter((i) => i.tbl_name !== "pull_requests"),
  ];
  for (const { sql } of otherIndexes) db.exec(sql);
  db.exec(refreshReviewSpansSql("SELECT id FROM pull_requests"));
  db.exec(refreshPullRequestFiguresSql("SELECT id FROM pull_requests"));
  for (const { sql } of prIndexes) db.exec(sql);
  db.exec("PRAGMA synchronous = FULL");
  db.close();
  log(
    `Generated ${counts.pullRequests.toLocaleString("en")} pull requests, ${counts.reviews.toLocaleString("en")} reviews, ` +
      `${counts.findings.toLocaleString("en")} findings, ${counts.ai.toLocaleString("en")} AI-authorship records in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  return counts;
}

export const smallOrg = (i) => `small-${String(i).padStart(2, "0")}`;

/**
 * Two pull requests of bigco (repository repo-000) whose one completed review lies two years from
 * the merge: one merged two years ago and re-reviewed an hour ago, one reviewed two years before
 * its merge two days ago. Before the gap tiers, either one made every query of bigco walk two years.
 */
export function poisonPullRequests(now) {
  return [
    { prNumber: 900_001, createdAt: now - 731 * DAY, mergedAt: now - 730 * DAY, reviewedAt: now - HOUR },
    { prNumber: 900_002, createdAt: now - 731 * DAY, mergedAt: now - 2 * DAY, reviewedAt: now - 730 * DAY },
  ];
}

/**
 * A batch of reviewer events shaped like the data set, as `storeEvents` receives them after
 * validation (times in epoch ms, ids as strings): per pull request one pull_request event,
 * 3 reviews, 10 findings and one AI-authorship record, cut at `size` events. The content depends
 * only on `org` and `seed`; every event carries `version` as its `updatedAt`, so the same call
 * with the same version is a replay, and with an earlier version a delayed retry of an old batch.
 */
export function reviewerBatch({ org, now, version, size = 1000, seed = 11 }) {
  const rnd = seededRandom(seed);
  const events = [];
  for (let prNumber = 1; events.length < size; prNumber++) {
    const ref = { org, repo: `repo-${prNumber % 7}`, prNumber, updatedAt: version };
    const createdAt = now - rnd.int(2 * DAY, 30 * DAY);
    const mergedAt = createdAt + rnd.int(10 * MIN, DAY);
    events.push({
      type: "pull_request",
      ...ref,
      author: `dev${rnd.int(1, 400)}`,
      createdAt,
      mergedAt,
      linesAdded: rnd.int(1, 900),
      linesDeleted: rnd.int(0, 400),
    });
    for (let r = 0; r < 3; r++) {
      const completed = rnd.chance(0.9);
      const at = createdAt + rnd.int(5 * MIN, DAY);
      events.push({
        type: "review",
        ...ref,
        reviewId: `${org}-r${prNumber}-${r}`,
        status: completed ? "completed" : "failed",
        completedAt: completed ? at : null,
      });
    }
    for (let f = 0; f < 10; f++) {
      events.push({
        type: "finding",
        ...ref,
        findingId: `${org}-f${prNumber}-${f}`,
        createdAt: createdAt + rnd.int(10 * MIN, DAY),
        posted: rnd.chance(0.9),
        aiAddressed: rnd.chance(0.4),
        feedback: rnd.chance(0.75) ? null : "positive",
      });
    }
    events.push({ type: "ai_authorship", ...ref, sourceId: `${org}-a${prNumber}`, lines: rnd.int(0, 600) });
  }
  return events.slice(0, size);
}
