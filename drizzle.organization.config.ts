import { defineConfig } from "drizzle-kit";

/** The organization Durable Object's SQLite; bundled into the Worker through migrations.js. */
export default defineConfig({
  dialect: "sqlite",
  driver: "durable-sqlite",
  schema: "./src/organization/schema.ts",
  out: "./migrations/organization",
});
