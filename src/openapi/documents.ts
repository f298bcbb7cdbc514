import type { createDocument } from "zod-openapi";
import { openApiDocument } from "./document";

/** A plain, JSON-serialisable OpenAPI 3.1 document. */
export type OpenApiDocument = ReturnType<typeof createDocument>;
type Components = NonNullable<OpenApiDocument["components"]>;
type Operation = { tags?: string[]; security?: Record<string, string[]>[]; responses: unknown };

/**
 * Interim split of the one generated document into the two the contract asks for (section 11):
 * the public one served at `GET /openapi.json` and the admin-only one at
 * `GET /internal/v1/openapi.json`. The route registry will produce both directly; until then the
 * tooling (`npm run openapi`, `lint:openapi`, `client:check`) works against these two functions.
 */
export function publicDocument(): OpenApiDocument {
  return subset(openApiDocument(), (path) => !isInternal(path));
}

/** The control plane (and, once it exists, the webhook endpoint): admin token only. */
export function internalDocument(): OpenApiDocument {
  const document = subset(openApiDocument(), isInternal);
  return {
    ...document,
    info: {
      ...document.info,
      title: `${document.info.title}: control plane`,
      description: "Admin-only: organization, repository, member and user synchronisation, API keys and reviewer events.",
    },
  };
}

const isInternal = (path: string) => path.startsWith("/internal/");

/**
 * The document restricted to some paths, without the components, security schemes and tags that
 * only the other paths use: the public document must not describe internal schemas.
 */
function subset(document: OpenApiDocument, keep: (path: string) => boolean): OpenApiDocument {
  const paths = Object.fromEntries(Object.entries(document.paths ?? {}).filter(([path]) => keep(path)));
  const components = reachableComponents(document.components ?? {}, paths);
  const operations = Object.values(paths).flatMap((item) => Object.values(item as Record<string, unknown>).filter(isOperation));
  const usedTags = new Set(operations.flatMap((operation) => operation.tags ?? []));
  const usedSchemes = new Set(
    [...(document.security ?? []), ...operations.flatMap((operation) => operation.security ?? [])].flatMap(Object.keys),
  );
  const securitySchemes = Object.fromEntries(
    Object.entries(document.components?.securitySchemes ?? {}).filter(([name]) => usedSchemes.has(name)),
  );
  return {
    ...document,
    ...(document.tags ? { tags: document.tags.filter((tag) => usedTags.has(tag.name)) } : {}),
    paths,
    components: { ...components, ...(Object.keys(securitySchemes).length > 0 ? { securitySchemes } : {}) },
  };
}

const isOperation = (value: unknown): value is Operation => typeof value === "object" && value !== null && "responses" in value;

/** Every `#/components/<section>/<name>` reachable from `root`, following references transitively. */
function reachableComponents(components: Components, root: unknown): Components {
  const sections = components as Record<string, Record<string, unknown> | undefined>;
  const seen = new Set<string>();
  const pending = [root];
  while (pending.length > 0) {
    for (const ref of refsIn(pending.pop())) {
      const match = /^#\/components\/([^/]+)\/([^/]+)$/.exec(ref);
      if (!match || seen.has(ref)) continue;
      seen.add(ref);
      pending.push(sections[match[1] as string]?.[match[2] as string]);
    }
  }
  const kept: Record<string, Record<string, unknown>> = {};
  for (const [section, entries] of Object.entries(sections)) {
    if (section === "securitySchemes" || !entries) continue;
    const used = Object.entries(entries).filter(([name]) => seen.has(`#/components/${section}/${name}`));
    if (used.length > 0) kept[section] = Object.fromEntries(used);
  }
  return kept as Components;
}

function refsIn(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(refsIn);
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([key, child]) => (key === "$ref" && typeof child === "string" ? [child] : refsIn(child)));
}
