import { describe, expect, it } from "vitest";
import { historyQuery, REPOSITORIES_PER_QUERY } from "../../src/github/calls-history-graphql";
import { prepare } from "../fake-github/graphql";

/**
 * The fake GitHub's GraphQL side is itself under test: queries are validated against GitHub's
 * published schema (an invalid one is refused, as GitHub refuses it), and the cost and node counts
 * follow GitHub's documented examples ("Rate limits and query limits for the GraphQL API").
 */

function accepted(query: string, variables: Record<string, unknown> = {}) {
  const prepared = prepare({ query, variables });
  if (!prepared.ok) throw new Error(`refused: ${JSON.stringify(prepared.errors)}`);
  return prepared;
}
function refused(query: string, variables: Record<string, unknown> = {}) {
  const prepared = prepare({ query, variables });
  if (prepared.ok) throw new Error("accepted");
  return prepared.errors;
}

describe("queries are validated against GitHub's published schema", () => {
  it("refuses a field GitHub's schema does not have, a wrong argument and a wrong variable type", () => {
    expect(refused('{ repository(owner: "a", name: "b") { pullRequests(first: 1) { nodes { linesAdded } } } }')).toEqual([
      expect.objectContaining({ message: 'Cannot query field "linesAdded" on type "PullRequest".' }),
    ]);
    expect(
      refused('{ repository(owner: "a", name: "b") { pullRequests(first: 1, state: MERGED) { totalCount } } }')[0]?.message,
    ).toMatch(/Unknown argument "state"/);
    expect(refused('query($n: Int!) { repository(owner: "a", name: $n) { id } }', { n: 1 })[0]?.message).toMatch(
      /Variable "\$n" of type "Int!" used in position expecting type "String!"/,
    );
    expect(refused("{ repository(owner: ")[0]?.message).toMatch(/Syntax Error/);
  });

  it("accepts the service's own history query at every batch size, and it costs what the sync plans", () => {
    const one = accepted(historyQuery(1), { owner: "o", name0: "r", after0: null });
    expect([one.cost, one.nodes]).toEqual([1, 100]);
    const full = accepted(historyQuery(REPOSITORIES_PER_QUERY));
    // 50 repositories, one pullRequests(first: 100) each: 50 requests, rounded to 1 point (the minimum).
    expect([full.cost, full.nodes]).toEqual([1, 5000]);
    // 150 would be 1.5, rounded to 2: the batch size keeps every query at 1 point.
    expect(accepted(historyQuery(150)).cost).toBe(2);
  });

  it("GitHub's node limits: first or last on every connection, 1 to 100, at most 500,000 nodes", () => {
    expect(refused('{ repository(owner: "a", name: "b") { pullRequests { totalCount } } }')).toEqual([
      expect.objectContaining({ type: "MISSING_PAGINATION_BOUNDARIES" }),
    ]);
    expect(refused('{ repository(owner: "a", name: "b") { pullRequests(first: 101) { totalCount } } }')).toEqual([
      expect.objectContaining({ type: "EXCESSIVE_PAGINATION" }),
    ]);
    expect(
      refused(
        "{ viewer { repositories(first: 100) { nodes { pullRequests(first: 100) { nodes { comments(first: 100) { totalCount } } } } } } }",
      ),
    ).toEqual([expect.objectContaining({ type: "MAX_NODE_LIMIT_EXCEEDED" })]);
  });
});

describe("cost and nodes follow GitHub's documented examples", () => {
  it("the node limit's simple query: 550 nodes; its complex query: 22,060", () => {
    const simple = `query { viewer { repositories(first: 50) { edges { repository: node { name
      issues(first: 10) { totalCount edges { node { title bodyHTML } } } } } } } }`;
    expect(accepted(simple).nodes).toBe(550);
    const complex = `query { viewer { repositories(first: 50) { edges { repository: node { name
      pullRequests(first: 20) { edges { pullRequest: node { title comments(first: 10) { edges { comment: node { bodyHTML } } } } } }
      issues(first: 20) { totalCount edges { issue: node { title bodyHTML comments(first: 10) { edges { comment: node { bodyHTML } } } } } } } } }
      followers(first: 10) { edges { follower: node { login } } } } }`;
    expect(accepted(complex).nodes).toBe(22_060);
  });

  it("the point calculation's example: 1 + 100 + 5,000 requests, 51 points; a query without connections costs 1", () => {
    const query = `query { viewer { login repositories(first: 100) { edges { node { id
      issues(first: 50) { edges { node { id labels(first: 60) { edges { node { id name } } } } } } } } } } }`;
    expect(accepted(query).cost).toBe(51);
    expect(accepted("{ viewer { login } rateLimit { cost } }").cost).toBe(1);
    // Fragments and variables count as written inline.
    const spread = `query($n: Int!) { viewer { repositories(first: $n) { nodes { ...R } } } }
      fragment R on Repository { issues(first: 100) { totalCount } }`;
    expect(accepted(spread, { n: 100 }).cost).toBe(1);
    expect(accepted(spread, { n: 100 }).nodes).toBe(10_100);
  });
});
