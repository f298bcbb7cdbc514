/**
 * Whether reviewer events know a repository of the organization (any pull request row, merged or
 * not, placeholder or not): such a repository exists for the analytics export even before the
 * control plane or GitHub registers it. One probe of the unique (org_key, repo_key, pr_number) index.
 */
export async function repositoryHasEvents(db: D1Database | D1DatabaseSession, orgKey: string, repoKey: string): Promise<boolean> {
  const row = await db
    .prepare("SELECT 1 AS found FROM pull_requests WHERE org_key = ?1 AND repo_key = ?2 LIMIT 1")
    .bind(orgKey, repoKey)
    .first<{ found: number }>();
  return row !== null;
}
