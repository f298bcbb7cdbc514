import { execSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { AxeBuilder } from "@axe-core/playwright";
import { type Browser, chromium, type Page } from "playwright-core";
import { expect } from "vitest";

/** Debian's Chromium (`apt-get install chromium`), driven by playwright-core; root needs --no-sandbox. */
export function launch(): Promise<Browser> {
  const executablePath = execSync("command -v chromium", { encoding: "utf8", shell: "/bin/sh" }).trim();
  return chromium.launch({ executablePath, args: ["--no-sandbox"] });
}

export const SCREENSHOTS = new URL("./screenshots/", import.meta.url).pathname;

/**
 * Every page the tests visit: no serious or critical axe-core violation, and screenshots at
 * 1280 px and 375 px (test/browser/screenshots/, gitignored) for a person to look at.
 */
export async function checkPage(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  for (const width of [1280, 375]) {
    await page.setViewportSize({ width, height: 800 });
    const results = await new AxeBuilder({ page }).analyze();
    const bad = results.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
    expect(bad, `axe on ${name} at ${width} px`).toEqual([]);
    // Nothing wider than the screen but what scrolls inside its own region.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow, `${name} at ${width} px scrolls sideways`).toBe(0);
    await page.screenshot({ path: `${SCREENSHOTS}${name}-${width}.png`, fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 800 });
}
