/**
 * The layering of docs/architecture.md ("Dependencies point one way"), checked by `npm run lint:deps`
 * (in `npm run check` and .ci/run). Top to bottom: entry (index.ts, interfaces.ts) → interfaces
 * (http/, routes, handlers, webhooks/, control-plane/, openapi/, operations/, app/, mcp/) → sync/ (the
 * installation sync's Workflow, started by the consumer and the control plane) and moves/ (the
 * Workflow of a move between analytics shards) → directory/ →
 * objects (organization/, auth/user-object.ts) and storage/ → github/ (the GitHub App client, an
 * outside-service adapter) → rules (pure functions) → schemas/ → lib/.
 * TypeScript 7 has no JavaScript API, so it runs with TypeScript 5 (scripts/lib/typescript5.mjs).
 */
const INTERFACES =
  "^src/(http|openapi|operations|control-plane|app|mcp)/|^src/[^/]+/routes[.]ts$|^src/webhooks/(consumer|receive)[.]ts$|^src/(index|interfaces)[.]ts$";
const RULES = "^src/rules/|^src/(directory/identity|organization/github-changes|organization/github-sync|organization/registration)[.]ts$";

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-folder-cycle",
      comment: "No import cycle between folders of src/ (a file-level cycle-free graph can still have one).",
      severity: "error",
      scope: "folder",
      from: { path: "^src" },
      to: { circular: true },
    },
    {
      name: "no-cycle",
      comment: "No import cycle between files either.",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "lib-at-the-bottom",
      comment: "lib/ imports nothing else of src/.",
      severity: "error",
      from: { path: "^src/lib/" },
      to: { path: "^src/", pathNot: "^src/lib/" },
    },
    {
      name: "schemas-on-lib-only",
      severity: "error",
      from: { path: "^src/schemas/" },
      to: { path: "^src/", pathNot: "^src/(lib|schemas)/" },
    },
    {
      name: "rules-are-pure",
      comment: "Rules decide from facts: other rules, schemas and lib only, and no cloudflare:* (they run on Node).",
      severity: "error",
      from: { path: RULES },
      // Type-only imports (row shapes) are erased: they add no code and no runtime dependency.
      to: { pathNot: `${RULES}|^src/(lib|schemas)/|^node_modules/`, dependencyTypesNot: ["type-only"] },
    },
    {
      name: "storage-on-rules-schemas-lib",
      comment: "D1 statements import no directory, object, auth or interface module.",
      severity: "error",
      from: { path: "^src/storage/" },
      to: { path: "^src/", pathNot: "^src/(lib|schemas|storage|rules)/" },
    },
    {
      name: "directory-reaches-objects-by-binding",
      comment: "directory/ calls the objects through env.ORGANIZATIONS, never by importing their modules.",
      severity: "error",
      from: { path: "^src/directory/" },
      to: { path: "^src/", pathNot: "^src/(lib|schemas|storage|directory)/" },
    },
    {
      name: "github-is-an-adapter",
      comment: "github/ talks to GitHub's API only: it imports lib/, schemas/ and itself, never an object, store or interface.",
      severity: "error",
      from: { path: "^src/github/" },
      to: { path: "^src/", pathNot: "^src/(lib|schemas|github)/" },
    },
    {
      name: "nothing-below-github-imports-it",
      comment: "storage/, rules, schemas/ and lib/ sit below github/ (the directory and objects above call it).",
      severity: "error",
      from: { path: `^src/(lib|schemas|storage)/|${RULES}` },
      to: { path: "^src/github/" },
    },
    {
      name: "nothing-below-imports-interfaces",
      comment: "Objects, storage, the directory, rules, schemas and lib import no interface (http, routes, handlers).",
      severity: "error",
      from: { path: "^src/(lib|schemas|storage|directory|organization|rules|auth|github)/" },
      to: { path: INTERFACES },
    },
    {
      name: "sync-is-a-job-below-the-interfaces",
      comment:
        "sync/ (the installation sync's Workflow) reads GitHub (github/) and writes through the directory and the objects' bindings; object modules only as types.",
      severity: "error",
      from: { path: "^src/sync/" },
      to: { path: "^src/", pathNot: "^src/(lib|schemas|directory|github|sync)/", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "nothing-below-sync-imports-it",
      comment: "Only the interfaces and the entry start or export the sync.",
      severity: "error",
      from: { path: "^src/(lib|schemas|storage|directory|organization|rules|auth|github)/" },
      to: { path: "^src/sync/" },
    },
    {
      name: "moves-is-a-job-below-the-interfaces",
      comment: "moves/ (a move's Workflow) runs the directory's move steps; nothing below the interfaces starts or exports it.",
      severity: "error",
      from: { path: "^src/moves/" },
      to: { path: "^src/", pathNot: "^src/(lib|schemas|directory|moves)/" },
    },
    {
      name: "nothing-below-moves-imports-it",
      severity: "error",
      from: { path: "^src/(lib|schemas|storage|directory|organization|rules|auth|github|sync)/" },
      to: { path: "^src/moves/" },
    },
    {
      name: "auth-from-interfaces-only",
      comment: "auth/ owns everything about keys; nothing below http/ imports it.",
      severity: "error",
      from: { path: "^src/(lib|schemas|storage|directory|organization|rules|github)/" },
      to: { path: "^src/auth/" },
    },
  ],
  options: {
    tsConfig: { fileName: "tsconfig.json" },
    tsPreCompilationDeps: true,
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^migrations/" },
  },
};
