import { foldName } from "../lib/names";

/**
 * The organization directory in D1 (`organization_names`, `organization_accounts`,
 * `organization_homes`, `organization_installations`; see `resolve.ts` for how it is used). Only organizations whose home key is not their folded
 * login have a name row, so the default of every lookup is the folded login.
 */

/** The home named for this login, or null when the directory has none (the home is then the folded login). */
export async function homeNamed(db: D1Database, login: string): Promise<string | null> {
  const row = await db
    .prepare("SELECT home_key FROM organization_names WHERE login_key = ?1")
    .bind(foldName(login))
    .first<{ home_key: string }>();
  return row?.home_key ?? null;
}

/**
 * The home of each of these logins (folded login → home key), in one read: the directory's, else
 * the folded login. For a batch of events, which name organizations by login.
 */
export async function homesOf(db: D1Database, logins: Iterable<string>): Promise<Map<string, string>> {
  const keys = [...new Set([...logins].map(foldName))];
  const homes = new Map(keys.map((key) => [key, key]));
  if (keys.length === 0) return homes;
  const { results } = await db
    .prepare("SELECT login_key, home_key FROM organization_names WHERE login_key IN (SELECT value FROM json_each(?1))")
    .bind(JSON.stringify(keys))
    .all<{ login_key: string; home_key: string }>();
  for (const row of results) homes.set(row.login_key, row.home_key);
  return homes;
}

/**
 * Where a GitHub delivery belongs, in one read: the home recorded for its account id, else the first
 * of `logins` the directory names, else null (the caller falls back to the folded login).
 */
export async function homeOfAccount(db: D1Database, accountId: number | null, logins: readonly string[]): Promise<string | null> {
  const row = await db
    .prepare(
      `SELECT coalesce(
         (SELECT home_key FROM organization_accounts WHERE account_id = ?1),
         (SELECT n.home_key FROM json_each(?2) AS l JOIN organization_names AS n ON n.login_key = l.value ORDER BY l.key LIMIT 1)
       ) AS home_key`,
    )
    .bind(accountId, JSON.stringify(logins.map(foldName)))
    .first<{ home_key: string | null }>();
  return row?.home_key ?? null;
}

/**
 * For the control plane's PUT of `login` with this installation id, in one read: the home of the
 * installation (an installation belongs to one organization for good), and the home the directory
 * names for the login; either may be null.
 */
export async function homesOfPut(
  db: D1Database,
  login: string,
  installationId: number,
): Promise<{ installation: string | null; named: string | null }> {
  const row = await db
    .prepare(
      `SELECT (SELECT home_key FROM organization_installations WHERE installation_id = ?1) AS installation,
              (SELECT home_key FROM organization_names WHERE login_key = ?2) AS named`,
    )
    .bind(installationId, foldName(login))
    .first<{ installation: string | null; named: string | null }>();
  return { installation: row?.installation ?? null, named: row?.named ?? null };
}

/** Records the home of an installation; idempotent, and a repeat writes no row. */
export async function recordInstallation(db: D1Database, installationId: number, home: string): Promise<void> {
  await installationStatement(db, installationId, home).run();
}

const installationStatement = (db: D1Database, installationId: number, home: string) =>
  db
    .prepare(
      `INSERT INTO organization_installations (installation_id, home_key) VALUES (?1, ?2)
       ON CONFLICT (installation_id) DO UPDATE SET home_key = excluded.home_key WHERE home_key <> excluded.home_key`,
    )
    .bind(installationId, home);

/** An organization's identity as its object reported it, with the version of that report. */
export interface HomeIdentity {
  key: string;
  login: string;
  accountId: number | null;
  installationId: number;
  /** The object's membership clock when it reported: raised by every change of login or account id. */
  version: number;
}

/**
 * Records where an organization lives after its object changed its identity (created, renamed,
 * learned its account id), in one transaction; idempotent, and a repeat writes no row.
 * - `login` now names `home`: a name row unless `login` folds to `home` (then a row for `login`
 *   pointing elsewhere is dropped: the object there answers for it first anyway);
 * - rows of other logins pointing to `home` go (the old login of a rename answers 404);
 * - the account id maps to `home`, and so does the installation id.
 *
 * Only when `version` is not older than the last one this home wrote (`organization_homes`): two
 * messages of one organization may be applied concurrently, and the one that reached the object
 * first may write here last. Its older identity then changes nothing. The version is raised first
 * and every other statement checks that it is still this write's, in the same transaction.
 */
export async function recordHome(db: D1Database, home: HomeIdentity): Promise<void> {
  const loginKey = foldName(home.login);
  const current = "(SELECT version FROM organization_homes WHERE home_key = ?1) = ?3";
  const statements = [
    db
      .prepare(
        `INSERT INTO organization_homes (home_key, version) VALUES (?1, ?2)
         ON CONFLICT (home_key) DO UPDATE SET version = excluded.version WHERE version < excluded.version`,
      )
      .bind(home.key, home.version),
    db
      .prepare(`DELETE FROM organization_names WHERE home_key = ?1 AND login_key <> ?2 AND ${current}`)
      .bind(home.key, loginKey, home.version),
    loginKey === home.key
      ? db.prepare(`DELETE FROM organization_names WHERE login_key = ?2 AND ${current}`).bind(home.key, loginKey, home.version)
      : db
          .prepare(
            `INSERT INTO organization_names (login_key, home_key) SELECT ?2, ?1 WHERE ${current}
             ON CONFLICT (login_key) DO UPDATE SET home_key = excluded.home_key WHERE home_key <> excluded.home_key`,
          )
          .bind(home.key, loginKey, home.version),
  ];
  if (home.accountId !== null) {
    statements.push(
      db
        .prepare(
          `INSERT INTO organization_accounts (account_id, home_key) SELECT ?2, ?1 WHERE ${current}
           ON CONFLICT (account_id) DO UPDATE SET home_key = excluded.home_key WHERE home_key <> excluded.home_key`,
        )
        .bind(home.key, home.accountId, home.version),
    );
  }
  // An installation never changes organization: no version needed.
  statements.push(installationStatement(db, home.installationId, home.key));
  await db.batch(statements);
}

/**
 * A page of the homes of every organization an installation was registered for (control plane or
 * GitHub), in home key order after `after`: what the daily reconciliation walks. Uninstalled ones are
 * included (their object says so). Without an index on `home_key` this scans the table: once a day,
 * a few thousand rows.
 */
export async function installationHomesAfter(db: D1Database, after: string, limit: number): Promise<string[]> {
  const { results } = await db
    .prepare("SELECT DISTINCT home_key FROM organization_installations WHERE home_key > ?1 ORDER BY home_key LIMIT ?2")
    .bind(after, limit)
    .all<{ home_key: string }>();
  return results.map((r) => r.home_key);
}
