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
    const card = page.getByRole("region", { name: /Analytics key/ });
    // The demo load minted ada-admin's keys: regenerate warns first.
    await card.getByText("Created").waitFor();
    await checkPage(page, "keys");

    await card.getByLabel("Expires in").selectOption("30");
    await card.getByRole("button", { name: "Regenerate key" }).click();
    const confirm = card.getByRole("alertdialog");
    expect(await confirm.textContent()).toContain("The current key stops working at once");
    await checkPage(page, "keys-regenerate-warning");
    await confirm.getByRole("button", { name: "Regenerate now" }).click();
    const shown = card.getByTestId("new-key-analytics");
    await shown.waitFor();
    const first = (await shown.textContent()) ?? "";
    expect(first).toMatch(/^cak_[A-Za-z0-9]{40}$/);
    expect(await card.getByText("it will not be shown again").count()).toBe(1);
    await card.getByRole("button", { name: "Copy key" }).click();
    await card.getByText("Copied to the clipboard.").waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(first);
    await checkPage(page, "keys-new-key");
    expect((await api(EXPORT, first)).status).toBe(200);
    // The command the page shows works as shown: 200 with rows.
    const command = (await card.getByTestId("curl-analytics").textContent()) ?? "";
    const [, header, target] = /^curl -s -H "([^"]+)" "([^"]+)"$/.exec(command) ?? [];
    expect(header).toBe(`Authorization: Bearer ${first}`);
    const tried = await fetch(target ?? "", { headers: { Authorization: `Bearer ${first}` } });
    expect(tried.status).toBe(200);
    expect(((await tried.json()) as { data: unknown[] }).data.length).toBeGreaterThan(0);

    // Regenerate: the old key is refused at once, the new one works.
    await card.getByRole("button", { name: "Regenerate key" }).click();
    await card.getByRole("alertdialog").getByRole("button", { name: "Regenerate now" }).click();
    await page.waitForFunction((old) => {
      const el = document.querySelector('[data-testid="new-key-analytics"]');
      return el !== null && el.textContent !== old;
    }, first);
    const second = (await shown.textContent()) ?? "";
    expect((await api(EXPORT, first)).status).toBe(401);
    expect((await api(EXPORT, second)).status).toBe(200);
    // Used: the list says so, to the hour.
    await page.reload();
    await card.getByText(/^in the hour from /).waitFor();

    await card.getByRole("button", { name: "Revoke" }).click();
    await card.getByText("No key.").waitFor();
    expect((await api(EXPORT, second)).status).toBe(401);

    await page.getByRole("button", { name: "Sign out", exact: true }).click();
    await page.waitForURL(`${url}/`);
    await page.goto(`${url}/app/keys`);
    await page.waitForURL(`${url}/`);
    await context.close();
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

  it("the admin reads the audit log, with the changes just made", async () => {
    const { context, page } = await signedIn("ada-admin");
    await page.goto(`${url}/app/orgs/acme/members`);
    await page.getByRole("link", { name: "Audit log" }).click();
    await page.getByRole("table", { name: /Member changes/ }).waitFor();
    expect(await page.getByRole("row", { name: /1006/ }).count()).toBeGreaterThanOrEqual(2);
    await checkPage(page, "audit-log");
    await context.close();
  });
});
