/**
 * GitHub's JSON for the objects the fake serves, field for field as GitHub's description requires
 * (openapi-check.ts validates every answer; test/node/fake-github-openapi.test.ts builds each kind).
 * The state (state.ts) holds only what tests set; everything else here is derived.
 */

export interface Account {
  id: number;
  login: string;
  type: "User" | "Bot" | "Organization";
}
export interface Repo {
  id: number;
  owner: Account;
  name: string;
  private: boolean;
  collaborators: Map<number, { account: Account; role: "admin" | "maintain" | "write" | "triage" | "read" }>;
  pulls: Map<number, Pull>;
  createdAt: string;
  /** GitHub's `updated_at`: bumped by every change a test makes to the repository (or set by it). */
  updatedAt: string;
}
export interface Pull {
  id: number;
  number: number;
  author: Account | null;
  createdAt: string;
  updatedAt: string;
  closedAt: string | null;
  mergedAt: string | null;
  additions: number;
  deletions: number;
}

const nodeId = (kind: string, id: number) => Buffer.from(`${kind}:${id}`).toString("base64");

export function simpleUser(base: string, a: Account) {
  const url = `${base}/users/${a.login}`;
  return {
    login: a.login,
    id: a.id,
    node_id: nodeId(a.type, a.id),
    avatar_url: `https://avatars.githubusercontent.com/u/${a.id}?v=4`,
    gravatar_id: "",
    url,
    html_url: `https://github.com/${a.login}`,
    followers_url: `${url}/followers`,
    following_url: `${url}/following{/other_user}`,
    gists_url: `${url}/gists{/gist_id}`,
    starred_url: `${url}/starred{/owner}{/repo}`,
    subscriptions_url: `${url}/subscriptions`,
    organizations_url: `${url}/orgs`,
    repos_url: `${url}/repos`,
    events_url: `${url}/events{/privacy}`,
    received_events_url: `${url}/received_events`,
    type: a.type,
    user_view_type: "public",
    site_admin: false,
  };
}

/** `GET /users/{username}` as anyone but the user sees it (GitHub's `public-user`). */
export function publicUser(base: string, a: Account, createdAt: string) {
  const { user_view_type: _view, ...user } = simpleUser(base, a);
  return {
    ...user,
    user_view_type: "public",
    name: null,
    company: null,
    blog: "",
    location: null,
    email: null,
    hireable: null,
    bio: null,
    twitter_username: null,
    public_repos: 0,
    public_gists: 0,
    followers: 0,
    following: 0,
    created_at: createdAt,
    updated_at: createdAt,
  };
}

/** `GET /user` as the user sees themself through a user access token (GitHub's `private-user`). */
export function privateUser(base: string, a: Account, createdAt: string) {
  return {
    ...publicUser(base, a, createdAt),
    user_view_type: "private",
    private_gists: 0,
    total_private_repos: 0,
    owned_private_repos: 0,
    disk_usage: 0,
    collaborators: 0,
    two_factor_authentication: true,
  };
}

export function collaborator(base: string, a: Account, role: string) {
  const write = role === "admin" || role === "maintain" || role === "write";
  return {
    ...simpleUser(base, a),
    permissions: {
      pull: true,
      triage: role !== "read",
      push: write,
      maintain: role === "admin" || role === "maintain",
      admin: role === "admin",
    },
    role_name: role,
  };
}

export function repository(base: string, r: Repo) {
  const full = `${r.owner.login}/${r.name}`;
  const url = `${base}/repos/${full}`;
  return {
    id: r.id,
    node_id: nodeId("Repository", r.id),
    name: r.name,
    full_name: full,
    license: null,
    forks: 0,
    permissions: { admin: false, maintain: false, push: false, triage: false, pull: true },
    owner: simpleUser(base, r.owner),
    private: r.private,
    html_url: `https://github.com/${full}`,
    description: null,
    fork: false,
    url,
    archive_url: `${url}/{archive_format}{/ref}`,
    assignees_url: `${url}/assignees{/user}`,
    blobs_url: `${url}/git/blobs{/sha}`,
    branches_url: `${url}/branches{/branch}`,
    collaborators_url: `${url}/collaborators{/collaborator}`,
    comments_url: `${url}/comments{/number}`,
    commits_url: `${url}/commits{/sha}`,
    compare_url: `${url}/compare/{base}...{head}`,
    contents_url: `${url}/contents/{+path}`,
    contributors_url: `${url}/contributors`,
    deployments_url: `${url}/deployments`,
    downloads_url: `${url}/downloads`,
    events_url: `${url}/events`,
    forks_url: `${url}/forks`,
    git_commits_url: `${url}/git/commits{/sha}`,
    git_refs_url: `${url}/git/refs{/sha}`,
    git_tags_url: `${url}/git/tags{/sha}`,
    git_url: `git://github.com/${full}.git`,
    issue_comment_url: `${url}/issues/comments{/number}`,
    issue_events_url: `${url}/issues/events{/number}`,
    issues_url: `${url}/issues{/number}`,
    keys_url: `${url}/keys{/key_id}`,
    labels_url: `${url}/labels{/name}`,
    languages_url: `${url}/languages`,
    merges_url: `${url}/merges`,
    milestones_url: `${url}/milestones{/number}`,
    notifications_url: `${url}/notifications{?since,all,participating}`,
    pulls_url: `${url}/pulls{/number}`,
    releases_url: `${url}/releases{/id}`,
    ssh_url: `git@github.com:${full}.git`,
    stargazers_url: `${url}/stargazers`,
    statuses_url: `${url}/statuses/{sha}`,
    subscribers_url: `${url}/subscribers`,
    subscription_url: `${url}/subscription`,
    tags_url: `${url}/tags`,
    teams_url: `${url}/teams`,
    trees_url: `${url}/git/trees{/sha}`,
    clone_url: `https://github.com/${full}.git`,
    mirror_url: null,
    hooks_url: `${url}/hooks`,
    svn_url: `https://github.com/${full}`,
    homepage: null,
    language: null,
    forks_count: 0,
    stargazers_count: 0,
    watchers_count: 0,
    size: 0,
    default_branch: "main",
    open_issues_count: 0,
    is_template: false,
    topics: [],
    has_issues: true,
    has_projects: true,
    has_wiki: true,
    has_pages: false,
    has_downloads: true,
    archived: false,
    disabled: false,
    visibility: r.private ? "private" : "public",
    pushed_at: r.createdAt,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
    open_issues: 0,
    watchers: 0,
  };
}

function pullCommon(base: string, r: Repo, p: Pull) {
  const full = `${r.owner.login}/${r.name}`;
  const url = `${base}/repos/${full}/pulls/${p.number}`;
  const issue = `${base}/repos/${full}/issues/${p.number}`;
  const sha = p.id.toString(16).padStart(40, "0");
  const link = (href: string) => ({ href });
  const branch = (ref: string) => ({
    label: `${r.owner.login}:${ref}`,
    ref,
    repo: repository(base, r),
    sha,
    user: simpleUser(base, r.owner),
  });
  return {
    url,
    id: p.id,
    node_id: nodeId("PullRequest", p.id),
    html_url: `https://github.com/${full}/pull/${p.number}`,
    diff_url: `https://github.com/${full}/pull/${p.number}.diff`,
    patch_url: `https://github.com/${full}/pull/${p.number}.patch`,
    issue_url: issue,
    commits_url: `${url}/commits`,
    review_comments_url: `${url}/comments`,
    review_comment_url: `${base}/repos/${full}/pulls/comments{/number}`,
    comments_url: `${issue}/comments`,
    statuses_url: `${base}/repos/${full}/statuses/${sha}`,
    number: p.number,
    state: p.closedAt ? "closed" : "open",
    locked: false,
    title: `Pull request ${p.number}`,
    body: null,
    labels: [],
    milestone: null,
    active_lock_reason: null,
    created_at: p.createdAt,
    updated_at: p.updatedAt,
    closed_at: p.closedAt,
    merged_at: p.mergedAt,
    merge_commit_sha: p.mergedAt ? sha : null,
    assignee: null,
    assignees: [],
    requested_reviewers: [],
    requested_teams: [],
    head: branch(`feature-${p.number}`),
    base: branch("main"),
    _links: {
      self: link(url),
      html: link(`https://github.com/${full}/pull/${p.number}`),
      issue: link(issue),
      comments: link(`${issue}/comments`),
      review_comments: link(`${url}/comments`),
      review_comment: link(`${base}/repos/${full}/pulls/comments{/number}`),
      commits: link(`${url}/commits`),
      statuses: link(`${base}/repos/${full}/statuses/${sha}`),
    },
    author_association: "MEMBER",
    auto_merge: null,
    draft: false,
  };
}

// GitHub shows a deleted author as the `ghost` user on a single pull request, whose `user` is required.
const GHOST: Account = { id: 10137, login: "ghost", type: "User" };

/** An item of `GET /repos/{owner}/{repo}/pulls` (`pull-request-simple`). */
export function pullSimple(base: string, r: Repo, p: Pull) {
  return { ...pullCommon(base, r, p), user: p.author ? simpleUser(base, p.author) : null };
}

/** `GET /repos/{owner}/{repo}/pulls/{n}` (`pull-request`): with the line counts the list lacks. */
export function pullFull(base: string, r: Repo, p: Pull) {
  return {
    ...pullCommon(base, r, p),
    user: simpleUser(base, p.author ?? GHOST),
    merged: p.mergedAt !== null,
    mergeable: null,
    rebaseable: null,
    mergeable_state: "unknown",
    merged_by: p.mergedAt && p.author ? simpleUser(base, p.author) : null,
    comments: 0,
    review_comments: 0,
    maintainer_can_modify: false,
    commits: 1,
    additions: p.additions,
    deletions: p.deletions,
    changed_files: 1,
  };
}

export function installation(
  base: string,
  i: { id: number; appId: number; account: Account; createdAt: string; suspendedAt: string | null },
) {
  return {
    id: i.id,
    account: simpleUser(base, i.account),
    repository_selection: "all",
    access_tokens_url: `${base}/app/installations/${i.id}/access_tokens`,
    repositories_url: `${base}/installation/repositories`,
    html_url: `https://github.com/organizations/${i.account.login}/settings/installations/${i.id}`,
    app_id: i.appId,
    app_slug: "pr-reviewer",
    target_id: i.account.id,
    target_type: i.account.type,
    permissions: { members: "read", metadata: "read", pull_requests: "read" },
    events: ["installation", "member", "organization", "pull_request", "repository"],
    created_at: i.createdAt,
    updated_at: i.createdAt,
    single_file_name: null,
    has_multiple_single_files: false,
    single_file_paths: [],
    suspended_by: null,
    suspended_at: i.suspendedAt,
  };
}

export function installationToken(token: string, expiresAt: string) {
  return {
    token,
    expires_at: expiresAt,
    permissions: { members: "read", metadata: "read", pull_requests: "read" },
    repository_selection: "all",
  };
}

/** `GET /orgs/{org}/memberships/{username}` (GitHub's `org-membership`): an active membership with its role. */
export function orgMembership(base: string, org: Account, user: Account, role: "admin" | "member") {
  return {
    url: `${base}/orgs/${org.login}/memberships/${user.login}`,
    state: "active",
    role,
    organization_url: `${base}/orgs/${org.login}`,
    organization: {
      login: org.login,
      id: org.id,
      node_id: nodeId("Organization", org.id),
      url: `${base}/orgs/${org.login}`,
      repos_url: `${base}/orgs/${org.login}/repos`,
      events_url: `${base}/orgs/${org.login}/events`,
      hooks_url: `${base}/orgs/${org.login}/hooks`,
      issues_url: `${base}/orgs/${org.login}/issues`,
      members_url: `${base}/orgs/${org.login}/members{/member}`,
      public_members_url: `${base}/orgs/${org.login}/public_members{/member}`,
      avatar_url: `https://avatars.githubusercontent.com/u/${org.id}?v=4`,
      description: null,
    },
    user: simpleUser(base, user),
  };
}

/** GitHub's error body (`basic-error`). */
export function basicError(message: string, path = "rest") {
  return { message, documentation_url: `https://docs.github.com/${path}` };
}
