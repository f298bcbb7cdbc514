import { schema as published } from "@octokit/graphql-schema";
import {
  buildSchema,
  type DocumentNode,
  execute,
  type FragmentDefinitionNode,
  type GraphQLError,
  type GraphQLNamedType,
  type GraphQLSchema,
  getNamedType,
  isInterfaceType,
  isObjectType,
  Kind,
  parse,
  type SelectionSetNode,
  type ValueNode,
  validate,
} from "graphql";
import type { Account, Pull, Repo } from "./shapes";

/**
 * The fake GitHub's GraphQL API (`POST /graphql`, or `/api/graphql` for the GHES form) over the
 * same state as its REST answers. The executable schema is GitHub's published one
 * (`@octokit/graphql-schema`'s schema.graphql), so every query is parsed and validated against
 * GitHub's real schema (an invalid one is refused the way GitHub refuses it: 200 with `errors`),
 * and every answer is shaped by that schema during execution: a resolver that returns the wrong type
 * or a null for a non-null field is an error, not a silently drifted body.
 *
 * Resolvers exist only for what the service asks: `repository(owner, name)` and its
 * `pullRequests(first/last, after, states, orderBy)`, the pull request's scalar fields and author,
 * and `rateLimit`. Any other field resolves to null (and so fails where the schema says non-null).
 *
 * Cost: GitHub's documented formula ("Rate limits and query limits for the GraphQL API"): every
 * connection is one request per parent node that may hold it (the parents' `first`/`last`
 * multiplied), summed, divided by 100, rounded, at least 1. GitHub's node limits are enforced as
 * documented too: every connection needs `first` or `last` of 1 to 100, and a query may ask for at
 * most 500,000 nodes.
 */

let built: GraphQLSchema | undefined;
/** GitHub's schema, built once per process (about 60k lines of SDL). */
export function githubSchema(): GraphQLSchema {
  built ??= buildSchema(published.idl, { assumeValidSDL: true });
  return built;
}

/** What a resolver sees: the installation's account (its repositories only) and the query's cost. */
export interface GraphqlContext {
  owner: Account;
  repos: ReadonlyMap<string, Repo>;
  cost: number;
  nodes: number;
  limit: number;
  remaining: number;
  used: number;
  resetAt: number;
}

/** GitHub's error object: `type` beside the message (graphql-js keeps it in `extensions`). */
interface GithubGraphqlError {
  type?: string;
  message: string;
  path?: readonly (string | number)[];
  locations?: readonly { line: number; column: number }[];
}

class TypedError extends Error {
  readonly type: string;
  constructor(type: string, message: string) {
    super(message);
    this.type = type;
  }
}

export type GraphqlRequest = { query?: unknown; variables?: unknown; operationName?: unknown };

/** Parsed and checked, before any state is read: the query's cost and node count, or GitHub's refusal. */
export function prepare(
  body: GraphqlRequest,
):
  | { ok: true; document: DocumentNode; variables: Record<string, unknown>; cost: number; nodes: number }
  | { ok: false; errors: GithubGraphqlError[] } {
  if (typeof body.query !== "string")
    return { ok: false, errors: [{ message: "A query attribute must be specified and must be a string." }] };
  let document: DocumentNode;
  try {
    document = parse(body.query);
  } catch (error) {
    const e = error as GraphQLError;
    return { ok: false, errors: [{ message: e.message, locations: e.locations }] };
  }
  const schema = githubSchema();
  const invalid = validate(schema, document);
  if (invalid.length > 0) return { ok: false, errors: invalid.map((e) => ({ message: e.message, locations: e.locations })) };
  const variables = (body.variables ?? {}) as Record<string, unknown>;
  try {
    const { requests, nodes } = costOf(schema, document, variables);
    return { ok: true, document, variables, cost: Math.max(1, Math.round(requests / 100)), nodes };
  } catch (error) {
    if (error instanceof TypedError) return { ok: false, errors: [{ type: error.type, message: error.message }] };
    throw error;
  }
}

/** Runs a prepared query over the state; answers GitHub's JSON body (`data`, and `errors` when any). */
export async function run(
  prepared: { document: DocumentNode; variables: Record<string, unknown> },
  context: GraphqlContext,
): Promise<{ data?: unknown; errors?: GithubGraphqlError[] }> {
  const result = await execute({
    schema: githubSchema(),
    document: prepared.document,
    variableValues: prepared.variables,
    rootValue: root,
    contextValue: context,
  });
  const errors = result.errors?.map((e) => {
    const typed = e.originalError instanceof TypedError ? { type: e.originalError.type } : {};
    return { ...typed, message: e.message, path: e.path, locations: e.locations };
  });
  return { data: result.data, ...(errors && errors.length > 0 ? { errors } : {}) };
}

// ---- the cost ----------------------------------------------------------------------------------

const MAX_NODES = 500_000;

function costOf(schema: GraphQLSchema, document: DocumentNode, variables: Record<string, unknown>) {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const operation = document.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION);
  if (!operation || operation.kind !== Kind.OPERATION_DEFINITION) return { requests: 0, nodes: 0 };
  const rootType = operation.operation === "mutation" ? schema.getMutationType() : schema.getQueryType();
  let requests = 0;
  let nodes = 0;

  const literal = (node: ValueNode | undefined): unknown => {
    if (!node) return undefined;
    if (node.kind === Kind.VARIABLE) return variables[node.name.value];
    if (node.kind === Kind.INT) return Number(node.value);
    return undefined;
  };

  const walk = (set: SelectionSetNode, parent: GraphQLNamedType, multiplier: number) => {
    for (const selection of set.selections) {
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        const type = selection.typeCondition ? (schema.getType(selection.typeCondition.name.value) ?? parent) : parent;
        walk(selection.selectionSet, type, multiplier);
        continue;
      }
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const fragment = fragments.get(selection.name.value);
        if (fragment) walk(fragment.selectionSet, schema.getType(fragment.typeCondition.name.value) ?? parent, multiplier);
        continue;
      }
      if (!selection.selectionSet || !(isObjectType(parent) || isInterfaceType(parent))) continue;
      const field = parent.getFields()[selection.name.value];
      if (!field) continue;
      const type = getNamedType(field.type);
      let inner = multiplier;
      if (type.name.endsWith("Connection")) {
        const arg = (name: string) => literal(selection.arguments?.find((a) => a.name.value === name)?.value);
        const size = (arg("first") ?? arg("last")) as number | undefined;
        if (size === undefined || size === null) {
          throw new TypedError(
            "MISSING_PAGINATION_BOUNDARIES",
            `You must provide a \`first\` or \`last\` value to properly paginate the \`${selection.name.value}\` connection.`,
          );
        }
        if (size < 1 || size > 100) {
          throw new TypedError(
            "EXCESSIVE_PAGINATION",
            `Requesting ${size} records on the \`${selection.name.value}\` connection exceeds the \`first\` limit of 100 records.`,
          );
        }
        requests += multiplier;
        inner = multiplier * size;
        nodes += inner;
      }
      walk(selection.selectionSet, type, inner);
    }
  };
  if (rootType) walk(operation.selectionSet, rootType, 1);
  if (nodes > MAX_NODES) {
    throw new TypedError(
      "MAX_NODE_LIMIT_EXCEEDED",
      `This query requests up to ${nodes} possible nodes which exceeds the maximum limit of ${MAX_NODES}.`,
    );
  }
  return { requests, nodes };
}

// ---- the resolvers -----------------------------------------------------------------------------

const cursorOf = (offset: number) => Buffer.from(`cursor:v2:${offset}`).toString("base64");
const offsetOf = (cursor: string) => {
  const m = /^cursor:v2:(\d+)$/.exec(Buffer.from(cursor, "base64").toString("utf8"));
  if (!m) throw new TypedError("INVALID_CURSOR_ARGUMENTS", `\`${cursor}\` does not appear to be a valid cursor.`);
  return Number(m[1]);
};
const nodeId = (kind: string, id: number) => Buffer.from(`${kind}:${id}`).toString("base64");

type PullArgs = {
  first?: number | null;
  last?: number | null;
  after?: string | null;
  before?: string | null;
  states?: string[] | null;
  orderBy?: { field: "CREATED_AT" | "UPDATED_AT" | "COMMENTS"; direction: "ASC" | "DESC" } | null;
};

const stateOf = (p: Pull) => (p.mergedAt !== null ? "MERGED" : p.closedAt !== null ? "CLOSED" : "OPEN");

function actor(a: Account | null) {
  if (!a) return null;
  const typename = a.type === "Bot" ? "Bot" : a.type === "Organization" ? "Organization" : "User";
  return { __typename: typename, login: a.login, databaseId: a.id, id: nodeId(typename, a.id) };
}

function pullNode(p: Pull) {
  return {
    __typename: "PullRequest",
    id: nodeId("PullRequest", p.id),
    databaseId: p.id,
    number: p.number,
    author: actor(p.author),
    createdAt: p.createdAt,
    updatedAt: p.updatedAt,
    mergedAt: p.mergedAt,
    closedAt: p.closedAt,
    merged: p.mergedAt !== null,
    closed: p.closedAt !== null,
    state: stateOf(p),
    additions: p.additions,
    deletions: p.deletions,
  };
}

/** A connection page: `after` and `first` (or `before`/`last`), GitHub's order (ties by number). */
function pullConnection(repo: Repo, args: PullArgs) {
  const field = args.orderBy?.field === "UPDATED_AT" ? "updatedAt" : "createdAt";
  // GitHub's default for a repository's pullRequests: no orderBy means creation order, ascending.
  const desc = args.orderBy?.direction === "DESC";
  const rows = [...repo.pulls.values()]
    .filter((p) => !args.states || args.states.includes(stateOf(p)))
    .sort((x, y) => (desc ? -1 : 1) * (Date.parse(x[field]) - Date.parse(y[field]) || x.number - y.number));
  let start = args.after ? offsetOf(args.after) + 1 : 0;
  let end = args.before ? offsetOf(args.before) : rows.length;
  if (args.first) end = Math.min(end, start + args.first);
  else if (args.last) start = Math.max(start, end - args.last);
  const page = rows.slice(start, end);
  return {
    totalCount: rows.length,
    nodes: page.map(pullNode),
    edges: page.map((p, i) => ({ cursor: cursorOf(start + i), node: pullNode(p) })),
    pageInfo: {
      hasNextPage: end < rows.length,
      hasPreviousPage: start > 0,
      startCursor: page.length > 0 ? cursorOf(start) : null,
      endCursor: page.length > 0 ? cursorOf(end - 1) : null,
    },
  };
}

const root = {
  repository(args: { owner: string; name: string }, context: GraphqlContext) {
    const repo = context.repos.get(`${args.owner}/${args.name}`.toLowerCase());
    // GitHub answers null with a NOT_FOUND error for a repository the installation cannot see.
    if (!repo || repo.owner.id !== context.owner.id) {
      throw new TypedError("NOT_FOUND", `Could not resolve to a Repository with the name '${args.owner}/${args.name}'.`);
    }
    return {
      __typename: "Repository",
      id: nodeId("Repository", repo.id),
      databaseId: repo.id,
      name: repo.name,
      isPrivate: repo.private,
      pullRequests: (a: PullArgs) => pullConnection(repo, a),
    };
  },
  rateLimit(_args: unknown, context: GraphqlContext) {
    return {
      cost: context.cost,
      limit: context.limit,
      nodeCount: context.nodes,
      remaining: context.remaining,
      used: context.used,
      resetAt: new Date(context.resetAt * 1000).toISOString().replace(/\.\d{3}Z$/, "Z"),
    };
  },
};
