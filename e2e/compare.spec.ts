import { mkdirSync } from "node:fs";
import { expect, test, type Page } from "@playwright/test";
import { BASE, expectAccessible, expectNoSidewaysScroll, KEY, PlaygroundPage, watchCspViolations } from "./pages";

/**
 * Compare with three and four variants (issue 32): at 1280×720 every column stands beside the
 * others, fully in view, with the same top, and each streams its own output with its deltas
 * against A; on a phone the columns are tabs. A draft run's share page shows the draft and its
 * instructions, and its run page's "Open in playground" reopens the draft to continue from.
 * Screenshots go to /tmp/i-compare-shots; the 1280 light one with four columns is the README's.
 */
const SHOTS = "/tmp/i-compare-shots";
mkdirSync(SHOTS, { recursive: true });

const cspViolations = new WeakMap<object, string[]>();
test.beforeEach(({ page }) => void cspViolations.set(page, watchCspViolations(page)));
test.afterEach(({ page }) => expect(cspViolations.get(page) ?? []).toEqual([]));

const SCHEMA = { type: "object", properties: { name: { type: "string" }, legs: { type: "integer" } }, required: ["name", "legs"] };
const COLUMNS = ["A", "B", "C", "D"];

/** The composition of every comparison here, with `count` columns (A and count − 1 variants). */
async function compose(page: Page, count: number) {
  const p = new PlaygroundPage(page);
  await p.open();
  await p.signIn();
  await p.operation().selectOption({ label: "Stream object" });
  await p.workflow().selectOption("extract-invoice");
  await p.input().fill("Compare four ways");
  await p.typeSchema(JSON.stringify(SCHEMA));
  await page.getByLabel("Compare with").selectOption({ label: "this prompt on free" });
  for (const name of COLUMNS.slice(2, count)) {
    await page.getByRole("button", { name: "Add variant" }).click();
    await page.getByLabel(`Variant ${name}`).selectOption({ label: "the same workflow again" });
  }
  // At most four columns: no fifth.
  if (count === 4) await expect(page.getByRole("button", { name: "Add variant" })).toHaveCount(0);
  return p;
}

/** Each column's result, wholly inside the window, next to the one before it, all with the same top. */
async function expectSideBySide(page: Page, count: number) {
  const viewport = page.viewportSize()!;
  const boxes = [];
  for (const name of COLUMNS.slice(0, count)) {
    const result = page.getByRole("region", { name: `Result ${name}` });
    await expect(result).toBeInViewport({ ratio: 1 });
    boxes.push((await result.boundingBox())!);
  }
  for (const [i, box] of boxes.entries()) {
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(viewport.width);
    expect(box.y + box.height).toBeLessThanOrEqual(viewport.height);
    // Readable: a column at least 250 px wide.
    expect(box.width).toBeGreaterThan(250);
    if (i === 0) continue;
    expect(box.x).toBeGreaterThanOrEqual(boxes[i - 1]!.x + boxes[i - 1]!.width);
    expect(Math.abs(box.y - boxes[0]!.y)).toBeLessThan(2);
  }
}

for (const scheme of ["light", "dark"] as const) {
  test.describe(`compare at 1280×720, ${scheme}`, () => {
    test.use({ viewport: { width: 1280, height: 720 }, colorScheme: scheme });

    for (const count of [3, 4]) {
      test(`${count} variants: columns side by side and in view, each streaming, deltas against A`, async ({ page }) => {
        const p = await compose(page, count);
        await p.run();
        // While they stream: every column in view, each output filling in.
        for (const name of COLUMNS.slice(0, count)) {
          await expect(page.getByRole("region", { name: `Result ${name}` }).getByTestId("result-object")).toContainText("{", { timeout: 30_000 });
        }
        await expectSideBySide(page, count);
        // The composer stepped aside for the columns; the bar with Run stays.
        await expect(page.locator("#composition")).toBeHidden();
        await expect(page.getByRole("button", { name: "Run", exact: true })).toBeInViewport();
        for (const name of COLUMNS.slice(0, count)) {
          await expect(page.getByRole("region", { name: `Result ${name}` }).getByTestId("result-object")).toContainText('"legs"', { timeout: 30_000 });
        }
        for (const name of COLUMNS.slice(1, count)) {
          const comparison = page.getByRole("region", { name: name === "B" ? "Comparison" : `Comparison ${name}`, exact: true });
          await expect(comparison.getByTestId("delta-cost")).toBeInViewport({ timeout: 30_000 });
          await expect(comparison.getByTestId("delta-latency")).toHaveText(/^[+\-±]/);
        }
        await expect(page.getByRole("region", { name: "Result B" }).getByRole("heading", { level: 2 })).toContainText("(free)");
        await expect(page.getByRole("region", { name: `Run metadata ${COLUMNS[count - 1]}` })).toBeInViewport();
        await expectSideBySide(page, count);
        await expectNoSidewaysScroll(page);
        await expectAccessible(page);
        await page.screenshot({ path: count === 4 && scheme === "light" ? "docs/screenshots/compare-4-wide.png" : `${SHOTS}/compare-${count}-1280-${scheme}.png` });

        // The composer comes back on request (the columns then go two by two), and steps aside again.
        await page.getByRole("button", { name: "Show the composer" }).click();
        await expect(page.locator("#composition")).toBeVisible();
        await expect(p.input()).toBeInViewport();
        await expectNoSidewaysScroll(page);
        await page.screenshot({ path: `${SHOTS}/compare-${count}-1280-${scheme}-composer.png` });
        await page.getByRole("button", { name: "Hide the composer" }).click();
        await expect(page.locator("#composition")).toBeHidden();
      });
    }
  });

  test.describe(`compare on a phone, ${scheme}`, () => {
    test.use({ viewport: { width: 390, height: 844 }, colorScheme: scheme });

    test("4 variants: one column at a time, tabs A–D to jump between them", async ({ page }) => {
      const p = await compose(page, 4);
      await p.run();
      const tabs = page.getByRole("tablist", { name: "Variants" });
      await expect(tabs).toBeInViewport();
      await expect(tabs.getByRole("tab", { name: "A" })).toHaveAttribute("aria-selected", "true");
      await expect(page.getByRole("region", { name: "Result A" }).getByTestId("result-object")).toContainText('"legs"', { timeout: 30_000 });
      await expect(page.getByRole("region", { name: "Result B" })).toBeHidden();
      await tabs.getByRole("tab", { name: "C" }).click();
      const c = page.getByRole("region", { name: "Result C" });
      await expect(c).toBeInViewport();
      await expect(page.getByRole("region", { name: "Result A" })).toBeHidden();
      await expect(c.getByTestId("result-object")).toContainText('"legs"', { timeout: 30_000 });
      await expect(page.getByRole("region", { name: "Comparison C" }).getByTestId("delta-cost")).toBeVisible({ timeout: 30_000 });
      // Arrow keys move between the tabs.
      await tabs.getByRole("tab", { name: "C" }).press("ArrowRight");
      await expect(tabs.getByRole("tab", { name: "D" })).toBeFocused();
      await expect(page.getByRole("region", { name: "Result D" })).toBeInViewport();
      await expectNoSidewaysScroll(page);
      await expectAccessible(page);
      await page.screenshot({ path: `${SHOTS}/compare-4-390-${scheme}.png` });
    });
  });
}

async function api(method: string, path: string, body?: unknown) {
  const response = await fetch(`${BASE()}${path}`, { method, headers: { "api-key": KEY(), ...(body !== undefined && { "content-type": "application/json" }) }, ...(body !== undefined && { body: JSON.stringify(body) }) });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

test.describe("a draft run shared and reopened", () => {
  test.use({ viewport: { width: 1280, height: 720 } });

  test("its share page shows the draft and its instructions; its run page reopens the draft in the playground", async ({ page }) => {
    const schema = { type: "object", properties: { invoiceTotal: { type: "number" } }, required: ["invoiceTotal"] };
    expect((await api("PUT", "/api/v1/workflows/e2e-shared-draft", { model: "fast", instructions: "SAVED PROMPT", schema })).status).toBe(201);
    const streamed = await api("POST", "/api/v1/stream/object", { input: "Invoice 12", workflowSlug: "e2e-shared-draft", schema, draft: { instructions: "DRAFTED PROMPT, shared", temperature: 0.9 } });
    expect(streamed.status).toBe(200);
    const runId = streamed.headers.get("x-run-id")!;
    const share = JSON.parse((await api("POST", `/api/v1/runs/${runId}/share`, {})).text) as { url: string };

    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.goto(`${BASE()}/s/${share.url.split("/s/")[1]}`);
      await expect(page.getByRole("heading", { level: 1 })).toContainText("e2e-shared-draft@1");
      await expect(page.getByText("draft", { exact: true })).toBeVisible();
      const draft = page.getByRole("region", { name: "Draft" });
      await expect(draft).toContainText("An unsaved draft of e2e-shared-draft@1 ran");
      await expect(draft.getByLabel("Instructions diff")).toContainText("+DRAFTED PROMPT, shared");
      await expect(draft.getByLabel("Definition that ran")).toContainText("temperature0.9");
      await draft.getByText("The instructions that ran").click();
      await expect(draft.getByTestId("draft-instructions")).toHaveText("DRAFTED PROMPT, shared");
      await expectAccessible(page);
      await page.screenshot({ path: `${SHOTS}/shared-draft-${scheme}.png`, fullPage: true });
    }

    // The run page's "Open in playground" reopens the draft on its base version, marked edited.
    await page.emulateMedia({ colorScheme: "light" });
    const p = new PlaygroundPage(page);
    await page.goto(`${BASE()}/runs/${runId}`);
    await p.signIn();
    await page.getByRole("link", { name: "Open in playground" }).click();
    await expect(p.workflow()).toHaveValue("e2e-shared-draft@1");
    const prompt = page.getByRole("region", { name: "Prompt" });
    await expect(prompt.getByTestId("instructions-editor")).toContainText("DRAFTED PROMPT, shared");
    await expect(prompt.getByText("edited", { exact: true })).toBeVisible();
    await expect(prompt.getByLabel("Temperature")).toHaveValue("0.9");
    await expect(p.input()).toHaveValue("Invoice 12");
    await expectAccessible(page);
    await page.screenshot({ path: `${SHOTS}/reopened-draft.png` });
    // Run again from it: the draft reaches the model, and no version was saved.
    await p.run();
    await expect(p.result().getByTestId("result-object")).toContainText('"invoiceTotal"', { timeout: 30_000 });
    const last = (await (await fetch(`${process.env.GENSERVE_E2E_UPSTREAM}/__last-request`)).json()) as { messages: { role: string; content: unknown }[] };
    expect(String(last.messages.find((m) => m.role === "system")?.content)).toContain("DRAFTED PROMPT, shared");
    expect(JSON.parse((await api("GET", "/api/v1/workflows/e2e-shared-draft/versions")).text).versions).toHaveLength(1);
  });
});
