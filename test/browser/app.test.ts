import { readFile } from "node:fs/promises";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { checkPage, launch } from "./browser";

/**
 * Contract section 13 in a real browser: every page and flow of the web app against `wrangler dev`
 * with the demo data (acme: ada-admin 1001 admin, max-member 1002 member, 5 purchased seats).
 * The tests run in order and share the browser; each signs in as the user it needs.
 */

const url = inject("appUrl");
const adminToken = inject("adminToken");
let browser: Browser;

beforeAll(async () => {
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

/** A fresh browser profile (no cookies), signed in through the landing page's local sign-in. */
async function signedIn(login: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: url });
  const page = await context.newPage();
  await page.goto(`${url}/`);
  await page.getByRole("button", { name: `Sign in as ${login}` }).click();
  await page.waitForURL(`${url}/app/keys`);
  await page.getByText(`Signed in as ${login}`).waitFor();
  await page.getByRole("heading", { name: "API keys" }).waitFor();
  return { context, page };
}

const api = (path: string, key: string) => fetch(`${url}${path}`, { headers: { Authorization: `Bearer ${key}` } });
const EXPORT = "/api/analytics/v1/prs?org=acme&perPage=1";

describe("landing page", () => {
  it("says what the service is, offers the demo users, links the API document", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const response = await page.goto(`${url}/`);
    expect(response?.headers()["content-security-policy"]).toContain("frame-ancestors 'none'");
    await page.getByRole("button", { name: "Sign in as ada-admin" }).waitFor();
    expect(await page.getByRole("link", { name: "/openapi.json" }).getAttribute("href")).toBe("/openapi.json");
    expect(await page.getByText("Sign-in with GitHub is not configured").count()).toBe(1);
    await checkPage(page, "landing");
    // An app page without a session goes to the landing page.
    await page.goto(`${url}/app/keys`);
    await page.waitForURL(`${url}/`);
    await context.close();
  });
});

describe("keys: create, copy, use, regenerate, revoke; sign out", () => {
  it("runs the whole flow as ada-admin", async () => {
    const { context, page } = await signedIn("ada-admin");
    // The demo load minted ada-admin's keys (named default): regenerate warns first.
    const card = page.getByRole("region", { name: /^Analytics key default cak_…/ });
    await card.getByText("Created").waitFor();
    await checkPage(page, "keys");

    await card.getByLabel("Expires in").selectOption("30");
    await card.getByRole("button", { name: "Regenerate key" }).click();
    const confirm = card.getByRole("alertdialog");
    expect(await confirm.textContent()).toContain("The current key stops working at once");
    await checkPage(page, "keys-regenerate-warning");
    await confirm.getByRole("button", { name: "Regenerate now" }).click();
    const shown = page.getByTestId("new-key-analytics");
    await shown.waitFor();
    const first = (await shown.textContent()) ?? "";
    expect(first).toMatch(/^cak_[A-Za-z0-9]{40}$/);
    expect(await page.getByText("it will not be shown again").count()).toBe(1);
    await page.getByRole("button", { name: "Copy key" }).click();
    await page.getByText("Copied to the clipboard.").waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(first);
    await checkPage(page, "keys-new-key");
    expect((await api(EXPORT, first)).status).toBe(200);
    // The command the page shows works as shown: 200 with rows.
    const command = (await page.getByTestId("curl-analytics").textContent()) ?? "";
    const [, header, target] = /^curl -s -H "([^"]+)" "([^"]+)"$/.exec(command) ?? [];
    expect(header).toBe(`Authorization: Bearer ${first}`);
    const tried = await fetch(target ?? "", { headers: { Authorization: `Bearer ${first}` } });
    expect(tried.status).toBe(200);
    expect(((await tried.json()) as { data: unknown[] }).data.length).toBeGreaterThan(0);
    // The card shows the new value's last characters.
    await page.getByRole("region", { name: `Analytics key default cak_…${first.slice(-4)}` }).waitFor();

    // Regenerate: the old key is refused at once, the new one works.
    const again = page.getByRole("region", { name: /^Analytics key default cak_…/ });
    await again.getByRole("button", { name: "Regenerate key" }).click();
    await again.getByRole("alertdialog").getByRole("button", { name: "Regenerate now" }).click();
    await page.waitForFunction((old) => {
      const el = document.querySelector('[data-testid="new-key-analytics"]');
      return el !== null && el.textContent !== old;
    }, first);
    const second = (await page.getByTestId("new-key-analytics").textContent()) ?? "";
    expect((await api(EXPORT, first)).status).toBe(401);
    expect((await api(EXPORT, second)).status).toBe(200);
    // Used: the list says so, to the hour.
    await page.reload();
    await page
      .getByRole("region", { name: /^Analytics key default/ })
      .getByText(/^in the hour from /)
      .waitFor();

    await page.getByRole("button", { name: "Revoke Analytics key default" }).click();
    await page.getByRole("region", { name: /^Analytics key default/ }).waitFor({ state: "detached" });
    expect((await api(EXPORT, second)).status).toBe(401);

    await page.getByRole("button", { name: "Sign out", exact: true }).click();
    await page.waitForURL(`${url}/`);
    await page.goto(`${url}/app/keys`);
    await page.waitForURL(`${url}/`);
    await context.close();
  });

  it("creates a named read-only members key limited to a network; it reads, its writes are refused, other keys work", async () => {
    const { context, page } = await signedIn("ada-admin");
    const form = page.getByRole("region", { name: "Create a key" });
    await form.getByLabel("Name").fill("agent");
    await form.getByLabel("Kind").selectOption("members");
    await form.getByLabel(/Read-only/).check();
    await form.getByLabel("Expires in").selectOption("7");
    await form.getByLabel(/Allowed networks/).fill("127.0.0.0/8, ::1/128");
    await checkPage(page, "keys-create-form");
    await form.getByRole("button", { name: "Create key" }).click();
    const shown = form.getByTestId("new-key-members");
    await shown.waitFor();
    const key = (await shown.textContent()) ?? "";
    expect(key).toMatch(/^cbk_[A-Za-z0-9]{40}$/);
    const card = page.getByRole("region", { name: `Members key agent cbk_…${key.slice(-4)}` });
    await card.getByText("read members (read-only)").waitFor();
    await card.getByText("127.0.0.0/8, ::1/128").waitFor();
    await checkPage(page, "keys-named");
    // The curl line works as shown (from this machine: inside 127.0.0.0/8).
    const command = (await form.getByTestId("curl-members").textContent()) ?? "";
    const [, , target] = /^curl -s -H "([^"]+)" "([^"]+)"$/.exec(command) ?? [];
    expect((await fetch(target ?? "", { headers: { Authorization: `Bearer ${key}` } })).status).toBe(200);
    const write = await fetch(`${url}/api/v1/organizations/acme/members/1002`, {
      method: "PATCH",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: JSON.stringify({ seat: true, expectedSeat: true }),
    });
    expect(write.status).toBe(403);
    expect(((await write.json()) as { error: { code: string } }).error.code).toBe("insufficient_scope");
    // The key of the demo load still works beside it.
    await page.getByRole("region", { name: /^Members key default/ }).waitFor();
    await page.getByRole("button", { name: "Revoke Members key agent" }).click();
    await card.waitFor({ state: "detached" });
    expect((await api("/api/v1/organizations", key)).status).toBe(401);
    await context.close();
  });
});

describe("organization keys: /app/orgs/{org}/keys for admins", () => {
  it("an admin creates an analytics key limited to a repository; it reads that one only; a member sees the page is for admins", async () => {
    const admin = await signedIn("ada-admin");
    await admin.page.goto(`${url}/app/orgs/acme/keys`);
    const form = admin.page.getByRole("region", { name: "Create a key" });
    await form.waitFor();
    await form.getByLabel("Name").fill("warehouse");
    await form.getByLabel(/^Repositories/).fill("api");
    await checkPage(admin.page, "org-keys-form");
    await form.getByRole("button", { name: "Create key" }).click();
    const shown = form.getByTestId("new-key-analytics");
    await shown.waitFor();
    const key = (await shown.textContent()) ?? "";
    const card = admin.page.getByRole("region", { name: `Analytics key warehouse cak_…${key.slice(-4)}` });
    await card.getByText("api", { exact: true }).waitFor();
    await checkPage(admin.page, "org-keys");
    expect((await api("/api/analytics/v1/prs?org=acme&repo=api&perPage=1", key)).status).toBe(200);
    expect((await api("/api/analytics/v1/prs?org=acme&repo=web&perPage=1", key)).status).toBe(403);
    await admin.page.getByRole("button", { name: "Revoke Analytics key warehouse" }).click();
    await card.waitFor({ state: "detached" });
    expect((await api("/api/analytics/v1/prs?org=acme&repo=api&perPage=1", key)).status).toBe(401);
    await admin.context.close();

    const member = await signedIn("max-member");
    await member.page.goto(`${url}/app/orgs/acme/keys`);
    await member.page.getByText("This page is for the organization's admins").waitFor();
    await checkPage(member.page, "org-keys-not-admin");
    await member.context.close();
  });

  it("sign out everywhere ends the person's sessions in every browser at once", async () => {
    const laptop = await signedIn("max-member");
    const phone = await signedIn("max-member");
    await phone.page.getByRole("button", { name: "Sign out everywhere" }).click();
    await phone.page.waitForURL(`${url}/`);
    // The other browser's next page finds its session gone and goes to the landing page.
    await laptop.page.goto(`${url}/app/orgs`);
    await laptop.page.waitForURL(`${url}/`);
    await Promise.all([laptop.context.close(), phone.context.close()]);
  });
});

describe("organizations and members", () => {
  it("lists the caller's organizations with their capabilities", async () => {
    const { context, page } = await signedIn("ada-admin");
    await page.getByRole("link", { name: "Organizations" }).click();
    await page.getByRole("link", { name: "acme", exact: true }).waitFor();
    await page.getByRole("link", { name: "globex", exact: true }).waitFor();
    await checkPage(page, "orgs");
    await context.close();
  });

  it("an admin turns a seat on and off", async () => {
    const { context, page } = await signedIn("ada-admin");
    await page.goto(`${url}/app/orgs/acme/members`);
    const seat = page.getByRole("checkbox", { name: "Seat of lin-member" });
    await seat.waitFor();
    expect(await seat.isChecked()).toBe(false);
    await checkPage(page, "members");
    await seat.click();
    await page.getByText("Seat of lin-member turned on.").waitFor();
    expect(await seat.isChecked()).toBe(true);
    await seat.click();
    await page.getByText("Seat of lin-member turned off.").waitFor();
    expect(await seat.isChecked()).toBe(false);
    await context.close();
  });

  it("a stale guard is explained with the current values, and the next try succeeds", async () => {
    const { context, page } = await signedIn("ada-admin");
    await page.goto(`${url}/app/orgs/acme/members`);
    const seat = page.getByRole("checkbox", { name: "Seat of sam-member" });
    await seat.waitFor();
    expect(await seat.isChecked()).toBe(true);
    // Someone else turns the seat off meanwhile (the control plane, as a GitHub sync would).
    const res = await fetch(`${url}/internal/v1/organizations/acme/members/1005`, {
      method: "PUT",
      headers: { Authorization: `Bearer ${adminToken}`, "Content-Type": "application/json" },
      body: JSON.stringify({
        githubLogin: "sam-member",
        workEmail: "sam-member@example.com",
        role: "member",
        seat: false,
        isBot: false,
      }),
    });
    expect(res.status).toBe(200);
    await seat.click();
    await page.getByText("Someone changed this member meanwhile").waitFor();
    expect(await page.getByRole("alert").textContent()).toContain("sam-member now has role member and seat off.");
    expect(await seat.isChecked()).toBe(false);
    await checkPage(page, "members-stale");
    await seat.click();
    await page.getByText("Seat of sam-member turned on.").waitFor();
    expect(await seat.isChecked()).toBe(true);
    await context.close();
  });

  it("a refusal is explained in words: the last admin keeps the admin role", async () => {
    const { context, page } = await signedIn("ada-admin");
    await page.goto(`${url}/app/orgs/acme/members`);
    const role = page.getByRole("combobox", { name: "Role of ada-admin" });
    await role.waitFor();
    await role.selectOption("member");
    await page.getByText("This is the organization's last admin. Make someone else an admin first.").waitFor();
    expect(await role.inputValue()).toBe("admin");
    await context.close();
  });

  it("a non-admin sees the list without any control", async () => {
    const { context, page } = await signedIn("max-member");
    await page.goto(`${url}/app/orgs/acme/members`);
    await page.getByRole("row", { name: /lin-member/ }).waitFor();
    await page.getByText("Only admins can change seats and roles.").waitFor();
    expect(await page.getByRole("checkbox", { name: /^Seat of / }).count()).toBe(0);
    expect(await page.getByRole("combobox", { name: /^Role of / }).count()).toBe(0);
    await checkPage(page, "members-non-admin");
    await context.close();
  });

  it("seats that follow the work: last activity, the inactive filter, the waiting list, freeing idle seats", async () => {
    const { context, page } = await signedIn("ada-admin");
    await page.goto(`${url}/app/orgs/acme/members`);
    // The demo: olga-oldtimer holds a seat, idle for months; nia-newhire waits for one.
    const olga = page.getByRole("row", { name: /olga-oldtimer/ });
    await olga.waitFor();
    expect(await olga.textContent()).toMatch(/\d{4}-\d{2}-\d{2}$/);
    expect(await page.getByTestId("seat-assignment").textContent()).toBe("automatic");
    const waitingList = page.getByRole("list", { name: "Waiting list" });
    await waitingList.getByText("nia-newhire").waitFor();
    await page.getByLabel("Inactive for (days)").fill("90");
    await page.getByRole("button", { name: "Filter", exact: true }).click();
    await page.getByRole("row", { name: /max-member/ }).waitFor({ state: "detached" });
    expect(await page.getByRole("row", { name: /olga-oldtimer/ }).count()).toBe(1);
    await checkPage(page, "members-seats");

    // A preview, then someone changes a shown seat meanwhile: the batch changes nothing and says why.
    const tools = page.getByRole("region", { name: "Seats to free" });
    await page.getByLabel("Idle for (days)").fill("90");
    await page.getByRole("button", { name: "Preview" }).click();
    await tools.getByText("olga-oldtimer").waitFor();
    await checkPage(page, "members-seats-preview");
    const putOlga = (seat: boolean) =>
      fetch(`${url}/internal/v1/organizations/acme/members/1007`, {
        method: "PUT",
        headers: { Authorization: `Bearer ${adminToken}`, "Content-Type": "application/json" },
        body: JSON.stringify({
          githubLogin: "olga-oldtimer",
          workEmail: "olga-oldtimer@example.com",
          role: "member",
          seat,
          isBot: false,
        }),
      });
    expect((await putOlga(false)).status).toBe(200);
    await tools.getByRole("button", { name: /^Free \d+ seats?$/ }).click();
    await page.getByText(/Nothing was changed: someone changed the seat of olga-oldtimer since the preview/).waitFor();
    await checkPage(page, "members-seats-conflict");

    // Preview again and free: one guarded batch with the values shown.
    expect((await putOlga(true)).status).toBe(200);
    await page.getByRole("button", { name: "Preview" }).click();
    await tools.getByText("olga-oldtimer").waitFor();
    const shown = await tools.getByRole("listitem").count();
    await tools.getByRole("button", { name: /^Free \d+ seats?$/ }).click();
    await page.getByText(new RegExp(`Freed ${shown} seats?;`)).waitFor();
    await page.getByRole("checkbox", { name: "Seat of olga-oldtimer" }).waitFor();
    expect(await page.getByRole("checkbox", { name: "Seat of olga-oldtimer" }).isChecked()).toBe(false);
    await context.close();
  });

  it("bulk seats: select several members, one guarded batch; one stale member refuses it whole, explained in words", async () => {
    const put = (id: string, login: string, seat: boolean) =>
      fetch(`${url}/internal/v1/organizations/acme/members/${id}`, {
        method: "PUT",
        headers: { Authorization: `Bearer ${adminToken}`, "Content-Type": "application/json" },
        body: JSON.stringify({ githubLogin: login, workEmail: `${login}@example.com`, role: "member", seat, isBot: false }),
      });
    expect((await put("1002", "max-member", true)).status).toBe(200);
    expect((await put("1005", "sam-member", true)).status).toBe(200);
    const { context, page } = await signedIn("ada-admin");
    await page.goto(`${url}/app/orgs/acme/members`);
    const select = (login: string) => page.getByRole("checkbox", { name: `Select ${login}` });
    const seat = (login: string) => page.getByRole("checkbox", { name: `Seat of ${login}` });
    await select("max-member").waitFor();

    // Select all on the shown page, then clear.
    const rows = await page.locator("tbody tr").count();
    await page.getByRole("checkbox", { name: "Select every member shown" }).check();
    await page.getByText(`${rows} selected.`).waitFor();
    await page.getByRole("button", { name: "Clear selection" }).click();
    await page.getByText("Select members to give or take several seats at once.").waitFor();

    // Two members selected; someone turns sam-member's seat off meanwhile: nothing changes, and the page says who and why.
    await select("max-member").check();
    await select("sam-member").check();
    await page.getByText("2 selected.").waitFor();
    await checkPage(page, "members-bulk-selected");
    expect((await put("1005", "sam-member", false)).status).toBe(200);
    await page.getByRole("button", { name: "Take seats" }).click();
    const alert = page.getByRole("alert");
    await alert.getByText(/^Nothing was changed: no seat was taken\./).waitFor();
    expect(await alert.textContent()).toContain("sam-member's seat is off now, but this page showed it on");
    expect(await alert.textContent()).not.toContain("max-member");
    const member = async (id: string) =>
      (await (await page.request.get(`${url}/app/api/orgs/acme/members/${id}`)).json()) as { seat: boolean };
    expect((await member("1002")).seat).toBe(true);
    await checkPage(page, "members-bulk-stale");
    await page.getByRole("button", { name: "Reload the list" }).click();
    await page.getByText("The list shows the current seats and roles.").waitFor();
    expect(await seat("sam-member").isChecked()).toBe(false);

    // Again with the values shown: sam-member has no seat to take (left out), max-member's is taken; then both get one.
    await select("max-member").check();
    await select("sam-member").check();
    await page.getByRole("button", { name: "Take seats" }).click();
    await page
      .getByText(/^Seats taken: max-member\. \d+ seats? available now\. \(1 selected member already had no seat\.\)$/)
      .waitFor();
    expect(await seat("max-member").isChecked()).toBe(false);
    await select("max-member").check();
    await select("sam-member").check();
    await page.getByRole("button", { name: "Give seats" }).click();
    await page.getByText(/^Seats given: max-member, sam-member\./).waitFor();
    expect(await seat("max-member").isChecked()).toBe(true);
    expect(await seat("sam-member").isChecked()).toBe(true);
    expect((await member("1005")).seat).toBe(true);
    await context.close();
  });

  it("the admin reads the audit log, with the changes just made, by login", async () => {
    const { context, page } = await signedIn("ada-admin");
    await page.goto(`${url}/app/orgs/acme/members`);
    await page.getByRole("link", { name: "Audit log" }).click();
    await page.getByRole("table", { name: /Member changes/ }).waitFor();
    // lin-member's seat went on and off: two changes by ada-admin through the app, named by login.
    const lin = page.getByRole("row", { name: /lin-member changed .* ada-admin API or app/ });
    expect(await lin.count()).toBeGreaterThanOrEqual(2);
    await checkPage(page, "audit-log");
    await context.close();
  });

  it("filters stay in the URL, and the CSV download equals the API's pages of the same filter", async () => {
    const { context, page } = await signedIn("ada-admin");
    await page.goto(`${url}/app/orgs/acme/audit-log`);
    await page.getByRole("table", { name: /Member changes/ }).waitFor();
    const form = page.getByRole("form", { name: "Filter the audit log" });
    await form.getByLabel("What").selectOption("member.updated");
    await form.getByLabel("Source").selectOption("api");
    await form.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/action=member.updated&source=api$/);
    const rows = page.getByRole("table", { name: /Member changes/ }).locator("tbody tr");
    await page.waitForFunction(() =>
      [...document.querySelectorAll("tbody tr")].every((tr) => tr.textContent?.includes("API or app")),
    );
    const shown = await rows.count();
    expect(shown).toBeGreaterThanOrEqual(2);
    // The URL restores the filter.
    await page.reload();
    await page.getByRole("table", { name: /Member changes/ }).waitFor();
    expect(await form.getByLabel("What").inputValue()).toBe("member.updated");
    expect(await form.getByLabel("Source").inputValue()).toBe("api");
    expect(await rows.count()).toBe(shown);
    await checkPage(page, "audit-log-filtered");
    // The download: every page of the filter as one file, equal to the API's CSV pages joined.
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: /Download CSV/ }).click(),
    ]);
    expect(download.suggestedFilename()).toBe("acme-audit-log.csv");
    const file = await readFile((await download.path()) as string, "utf8");
    const pages = await page.evaluate(async () => {
      const texts: string[] = [];
      let cursor: string | null = null;
      do {
        const q = new URLSearchParams({ action: "member.updated", source: "api", limit: "1", format: "csv" });
        if (cursor) q.set("cursor", cursor);
        const res = await fetch(`/app/api/orgs/acme/audit-log?${q}`);
        texts.push(await res.text());
        cursor = res.headers.get("X-Next-Cursor");
      } while (cursor);
      return texts;
    });
    expect(pages.length).toBe(shown);
    const [header = "", ...records] = file.split("\r\n");
    expect(header).toBe(
      "id,at,action,source,actorGithubUserId,actorGithubLogin,githubUserId,githubLogin,beforeSeat,beforeRole," +
        "beforeSeatAssignment,afterSeat,afterRole,afterSeatAssignment,correlationId,keyId,keyName,ip",
    );
    expect(file).toBe(`${header}\r\n${pages.map((text) => text.slice(header.length + 2)).join("")}`);
    expect(records.filter((r) => r !== "")).toHaveLength(shown);
    await context.close();
  });

  it("the members page downloads the filtered member list as CSV", async () => {
    const { context, page } = await signedIn("ada-admin");
    await page.goto(`${url}/app/orgs/acme/members`);
    await page.getByRole("row", { name: /lin-member/ }).waitFor();
    await page.getByRole("combobox", { name: /^Seat/ }).selectOption("true");
    await page.getByRole("button", { name: "Filter", exact: true }).click();
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: /Download CSV/ }).click(),
    ]);
    expect(download.suggestedFilename()).toBe("acme-members.csv");
    const file = await readFile((await download.path()) as string, "utf8");
    const members = await page.evaluate(async () => {
      const all: { githubLogin: string; seat: boolean }[] = [];
      let cursor: string | null = null;
      do {
        const q = new URLSearchParams({ seat: "true", limit: "100" });
        if (cursor) q.set("cursor", cursor);
        const page = (await (await fetch(`/app/api/orgs/acme/members?${q}`)).json()) as {
          data: { githubLogin: string; seat: boolean }[];
          nextCursor: string | null;
        };
        all.push(...page.data);
        cursor = page.nextCursor;
      } while (cursor);
      return all;
    });
    const [header, ...records] = file.split("\r\n").filter((line) => line !== "");
    expect(header).toBe("githubUserId,githubLogin,workEmail,role,seat,isBot,lastActivityAt");
    expect(records.map((r) => r.split(",")[1])).toEqual(members.map((m) => m.githubLogin));
    expect(records.every((r) => r.split(",")[4] === "true")).toBe(true);
    expect(members.length).toBeGreaterThan(0);
    await checkPage(page, "members-filtered");
    await context.close();
  });
});
