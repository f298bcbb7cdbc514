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
    expect(await outOfReach(page), `${name} at ${width} px: controls cut off`).toEqual([]);
    await page.screenshot({ path: `${SCREENSHOTS}${name}-${width}.png`, fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 800 });
}

/**
 * Every link, button and form control that is drawn but lies (even in part) outside the viewport's
 * width and is not inside a scrollable region (itself within the viewport, focusable, so the rest
 * is reachable by scrolling it): such a control is cut off. Described by tag and text.
 */
function outOfReach(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const inside = (r: DOMRect) => r.left >= -0.5 && r.right <= width + 0.5;
    const scroller = (el: Element): HTMLElement | null => {
      for (let p = el.parentElement; p; p = p.parentElement) {
        const { overflowX } = getComputedStyle(p);
        if ((overflowX === "auto" || overflowX === "scroll") && p.scrollWidth > p.clientWidth) return p;
      }
      return null;
    };
    const bad: string[] = [];
    for (const el of document.querySelectorAll("a[href], button, input, select, textarea, summary")) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;
      if (inside(r)) continue;
      const region = scroller(el);
      if (region && inside(region.getBoundingClientRect()) && region.tabIndex >= 0) continue;
      bad.push(
        `${el.tagName.toLowerCase()} "${(el.textContent ?? "").trim().slice(0, 40)}" at ${Math.round(r.left)}..${Math.round(r.right)}`,
      );
    }
    return bad;
  });
}
