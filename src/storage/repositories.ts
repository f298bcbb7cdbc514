/**
 * Whether reviewer events know every one of these repositories of the organization (any pull
 * request row, merged or not, placeholder or not): such a repository exists for the analytics
 * export even before the control plane or GitHub registers it. One statement, one probe of the
 * unique (org_key, repo_key, pr_number) index per name; it stops at the first unknown one.
 */
export async function repositoriesHaveEvents(
  db: D1Database | D1DatabaseSession,
  orgKey: string,
  repoKeys: readonly string[],
): Promise<boolean> {
  const row = await db
    .prepare(
      "SELECT 1 AS missing FROM json_each(?2) AS j " +
        "WHERE NOT EXISTS (SELECT 1 FROM pull_requests AS p WHERE p.org_key = ?1 AND p.repo_key = j.value) LIMIT 1",
    )
    .bind(orgKey, JSON.stringify(repoKeys))
    .first<{ missing: number }>();
  return row === null;
}
