import { z } from "zod";
import type { GithubUsage, InstallationOctokit } from "./client";
import { GithubError } from "./errors";

/**
 * The calls of contract section 17, one file per job (the `calls-` family): the installation and
 * its repositories (`calls-installation.ts`), the organization's members (`calls-members.ts`), the
 * pull request history through REST (`calls-history.ts`) and through GraphQL
 * (`calls-history-graphql.ts`). Each is reduced to the fields the service keeps (parsed with zod,
 * so a change on GitHub's side is an `unexpected_shape` error, not a silent `undefined`).
 * Every function answers `{ data, usage }`: the usage is what the call cost (for the benchmark
 * that chooses between REST and GraphQL for the history). This file: what the family shares.
 */

export type GithubResult<T> = { data: T; usage: GithubUsage };

export const Account = z.object({ id: z.number().int(), login: z.string(), type: z.string() });
/** A user as the service keeps it: GitHub's `type` is `User`, `Bot` or `Organization`. */
export type GithubAccount = z.infer<typeof Account>;

export interface GithubMergedPull {
  number: number;
  /** null when GitHub no longer knows the author (a deleted account shows as `ghost`, not null). */
  author: GithubAccount | null;
  createdAt: string;
  mergedAt: string;
  updatedAt: string;
  additions: number;
  deletions: number;
}

/** `value` parsed with `schema`, or an `unexpected_shape` error naming `what`. */
export function parse<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new GithubError("unexpected_shape", `${what}: ${z.prettifyError(result.error)}`, { calls: 0, points: 0 });
  }
  return result.data;
}

/** The fields of an account the service keeps. */
export const account = (a: GithubAccount): GithubAccount => ({ id: a.id, login: a.login, type: a.type });

/** Every page (100 a page) of a REST list, each item parsed. */
export async function allPages<T>(
  octokit: InstallationOctokit,
  route: string,
  params: Record<string, unknown>,
  item: z.ZodType<T>,
) {
  const rows: T[] = [];
  for await (const page of octokit.paginate.iterator(route, { ...params, per_page: 100 })) {
    rows.push(...parse(z.array(item), page.data, route));
  }
  return rows;
}
