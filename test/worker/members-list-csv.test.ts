import { runInDurableObject } from "cloudflare:test";
import { parse } from "csv-parse/sync";
import { describe, expect, it } from "vitest";
import type { OrganizationObject } from "../../src/organization/object";
import { csvWalk, cursorParam, errorOf, type Member, setup, walk } from "./admin-helpers";
import { env } from "./helpers";

/** `GET /api/v1/organizations/{org}/members?format=csv` (contract section 21): the filtered list as CSV, page by page. */

const HEADER = "githubUserId,githubLogin,workEmail,role,seat,isBot,lastActivityAt";
const cell = (text: string) => (/^[=+\-@]/.test(text) ? `'${text}` : text);
const columns = (m: Member) => [
  m.githubUserId,
  m.githubLogin,
  cell(m.workEmail ?? ""),
  m.role,
  String(m.seat),
  String(m.isBot),
  m.lastActivityAt ?? "",
];

/** An organization of nine members besides the caller: roles, seats, a bot, one without a work e-mail, one formula-like address. */
async function organization() {
  const s = await setup();
  for (let i = 0; i < 3; i++) await s.member("member", { seat: i === 0, login: `dev-${i}` });
  await s.member("viewer", { login: "Viewer-Max" });
  await s.member("admin", { seat: true, login: "ops-lead" });
  await s.member("member", { isBot: true, login: "ci[bot]" });
  await s.member("member", { seat: true, login: "dev-seated" });
  // A member GitHub announced has no work e-mail until a sync provides one.
  const hooked = await s.member("member", { login: "dev-hooked" });
  await runInDurableObject(env.ORGANIZATIONS.getByName(s.org.toLowerCase()), (_: OrganizationObject, state) => {
    state.storage.sql.exec("UPDATE members SET work_email = NULL WHERE github_user_id = ?", hooked);
  });
  // An address a spreadsheet would run as a formula.
  await s.member("member", { login: "dev-formula", email: "=cmd@example.com" });
  return s;
}

/** Every CSV page of a filtered list at this page size (admin-helpers `csvWalk`). */
const membersCsvWalk = (s: Awaited<ReturnType<typeof setup>>, filters: string, limit: number) =>
  csvWalk((cursor) => s.list(`${filters}&limit=${limit}&format=csv${cursorParam(cursor)}`), HEADER);

describe("format=csv on the member list", () => {
  it("every filtered walk as CSV equals the JSON walk, page for page, at every page size", async () => {
    const s = await organization();
    for (const filters of ["", "seat=true", "role=member&seat=false", "search=dev", "search=DEV&role=member", "role=viewer"]) {
      for (const limit of [1, 3, 100]) {
        const json = await walk<Member>(async (cursor) =>
          s.listOk(`${filters}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`),
        );
        expect(json.items.length, filters).toBeGreaterThan(0);
        const csv = await membersCsvWalk(s, filters, limit);
        expect(csv.pages, `${filters} ${limit}`).toBe(json.pages);
        expect(csv.rows, `${filters} ${limit}`).toEqual(json.items.map(columns));
      }
    }
    const all = await membersCsvWalk(s, "", 100);
    expect(all.rows.map((r) => r[1]).sort()).toEqual(
      [
        "dev-formula",
        "Viewer-Max",
        "ci[bot]",
        "dev-0",
        "dev-1",
        "dev-2",
        "dev-hooked",
        "dev-seated",
        "ops-lead",
        `user${s.caller.id}`,
      ].sort(),
    );
    expect(all.rows.find((r) => r[1] === "dev-hooked")?.[2]).toBe(""); // no work e-mail yet
    expect(all.rows.find((r) => r[1] === "dev-formula")?.[2]).toBe("'=cmd@example.com");
  });

  it("Accept: text/csv chooses CSV; JSON pages carry Link and X-Next-Cursor too; bad format and errors stay JSON", async () => {
    const s = await organization();
    const accept = await s.list("limit=2", undefined, { ...s.auth, Accept: "text/csv" });
    expect(accept.headers.get("Content-Type")).toBe("text/csv; charset=utf-8");
    const json = await s.list("limit=2");
    const page = (await json.json()) as { nextCursor: string };
    expect(json.headers.get("X-Next-Cursor")).toBe(page.nextCursor);
    expect(json.headers.get("Link")).toContain(`cursor=${page.nextCursor}`);
    const [, ...body] = parse(await accept.text()) as string[][];
    expect(body).toHaveLength(2);
    const bad = await s.list("format=xlsx");
    expect(bad.status).toBe(400);
    expect(bad.headers.get("Content-Type")).toContain("application/json");
    expect((await errorOf(bad)).details).toEqual([{ path: "format", message: "must be json or csv" }]);
    const empty = await s.list("search=nobody-at-all&format=csv");
    expect(await empty.text()).toBe(`${HEADER}\r\n`);
  });
});
