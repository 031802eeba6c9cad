import AxeBuilder from "@axe-core/playwright";
import { expect, type Page } from "@playwright/test";

export const BASE = () => process.env.GENSERVE_E2E_URL!;
export const KEY = () => process.env.GENSERVE_E2E_KEY!;

/** The playground as a page object: what a person sees and does, by accessible names. */
export class PlaygroundPage {
  constructor(readonly page: Page) {}

  async open(hash = ""): Promise<void> {
    await this.page.goto(`${BASE()}/${hash}`);
  }

  async signIn(key = KEY()): Promise<void> {
    await this.page.getByLabel("API key").fill(key);
    await this.page.getByRole("button", { name: "Sign in" }).click();
  }

  operation = () => this.page.getByLabel("Operation");
  workflow = () => this.page.getByLabel("Workflow", { exact: true });
  input = () => this.page.getByLabel("Input", { exact: true });
  result = () => this.page.getByRole("region", { name: "Result" });
  metadata = () => this.page.getByRole("region", { name: "Run metadata" });
  schema = () => this.page.getByRole("region", { name: "Schema" });

  /** Replaces the schema by typing into Monaco (inserted as typed text, no auto-closing). */
  async typeSchema(text: string): Promise<void> {
    const editor = this.schema().locator(".monaco-editor").first();
    await editor.waitFor();
    await editor.click();
    await this.page.keyboard.press("ControlOrMeta+A");
    await this.page.keyboard.press("Delete");
    await this.page.keyboard.insertText(text);
  }

  /** The Advanced section (attachments, thread, callback), opened if it is closed. */
  async openAdvanced(): Promise<void> {
    const toggle = this.page.getByRole("button", { name: /^Advanced/ });
    if ((await toggle.getAttribute("aria-expanded")) !== "true") await toggle.click();
  }

  /** Copies the request from the bar's Code menu ("Copy as curl", "Copy as fetch", "Copy permalink"). */
  async copy(what: "Copy as curl" | "Copy as fetch" | "Copy permalink"): Promise<void> {
    await this.page.getByRole("button", { name: "Code" }).click();
    await this.page.getByRole("menuitem", { name: what }).click();
  }

  /** Compare on a phone shows one column at a time: picks that column's tab when the tabs are shown. */
  async showVariant(name: string): Promise<void> {
    // Column A shows first at every width, once the comparison is on the page.
    await expect(this.page.getByRole("region", { name: "Result A" })).toBeVisible();
    const tabs = this.page.getByRole("tablist", { name: "Variants" });
    if (await tabs.isVisible()) await tabs.getByRole("tab", { name, exact: true }).click();
  }

  async run(): Promise<void> {
    await this.page.getByRole("button", { name: "Run", exact: true }).click();
  }
}

/** WCAG 2 A/AA checks with axe-core; Monaco's own widget is excluded (it is not ours to fix). */
export async function expectAccessible(page: Page): Promise<void> {
  const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).exclude(".monaco-editor").analyze();
  expect(results.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)).toEqual([]);
}

/**
 * Content-Security-Policy violations the browser reports on a page (its console says "Refused to …
 * because it violates the following Content Security Policy directive"): the pages' strict policy
 * must not break anything the playground does.
 */
export function watchCspViolations(page: Page): string[] {
  const violations: string[] = [];
  page.on("console", (message) => {
    if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
  });
  return violations;
}

/**
 * What sticks out past the window's right edge, and by how much the page scrolls sideways. Content
 * that scrolls inside its own box (a wide table on a phone) does not move the page, and is allowed.
 */
export async function expectNoSidewaysScroll(page: Page): Promise<void> {
  const found = await page.evaluate(() => ({
    overflow: document.documentElement.scrollWidth - window.innerWidth,
    outside: [...document.querySelectorAll("body *")]
      .filter((e) => {
        if (e.getBoundingClientRect().right <= window.innerWidth + 0.5 || e.closest(".monaco-editor") || e.getClientRects().length === 0) return false;
        for (let box = e.parentElement; box && box !== document.body; box = box.parentElement) {
          if (/auto|scroll|hidden/.test(getComputedStyle(box).overflowX) && box.getBoundingClientRect().right <= window.innerWidth + 0.5) return false;
        }
        return true;
      })
      .map((e) => `${e.tagName.toLowerCase()}.${[...e.classList].slice(0, 3).join(".")} ${Math.round(e.getBoundingClientRect().right)}`)
      .slice(0, 8),
  }));
  expect(found).toEqual({ overflow: 0, outside: [] });
}
