import { defineConfig } from "drizzle-kit";

/** D1 (analytics data). `npm run db:generate` writes flat SQL files that wrangler and tests apply. */
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/storage/d1-schema.ts",
  out: "./migrations/d1",
});
