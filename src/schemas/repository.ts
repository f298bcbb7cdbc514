import { z } from "zod";
import { GithubId, GithubUserId, OrgLogin, RepoName } from "./common";

/** Control plane: `PUT /internal/v1/organizations/{org}/repositories/{repo}`. */
export const RepositoryInput = z
  .strictObject({
    private: z.boolean(),
    collaborators: z.array(GithubId).max(10_000).default([]),
  })
  .meta({ id: "RepositoryInput" });
export type RepositoryInput = z.output<typeof RepositoryInput>;

export const Repository = z
  .object({ org: OrgLogin, name: RepoName, private: z.boolean(), collaborators: z.array(GithubUserId).max(10_000) })
  .meta({ id: "Repository" });
export type Repository = z.infer<typeof Repository>;
