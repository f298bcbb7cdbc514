import { defineConfig } from "drizzle-kit";

/** The user Durable Object's SQLite; bundled into the Worker through migrations.js. */
export default defineConfig({
  dialect: "sqlite",
  driver: "durable-sqlite",
  schema: "./src/auth/user-schema.ts",
  out: "./migrations/user",
});
