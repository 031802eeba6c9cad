import { mkdirSync } from "node:fs";
import { expect, test, type Page } from "@playwright/test";
import { BASE, expectAccessible, expectNoSidewaysScroll, KEY, PlaygroundPage, watchCspViolations } from "./pages";

/**
 * The playground as a prompt workbench (issue 32): a workflow's prompt edited beside the input and
 * run as a draft (what the model received is read back from the fake upstream), the versions left
 * as they were, the draft saved as the next version with a label; "Try this version"; variants
 * compared in columns side by side at 1280 px; the presenter view at 1920×1080. Screenshots of each
 * size and theme go to /tmp/i-drafts-shots (looked at by a person, not kept in the repo).
 */
const SHOTS = "/tmp/i-drafts-shots";
mkdirSync(SHOTS, { recursive: true });

const cspViolations = new WeakMap<object, string[]>();
test.beforeEach(({ page }) => void cspViolations.set(page, watchCspViolations(page)));
test.afterEach(({ page }) => expect(cspViolations.get(page) ?? []).toEqual([]));

async function api(method: string, path: string, body?: unknown) {
  const response = await fetch(`${BASE()}${path}`, { method, headers: { "api-key": KEY(), ...(body !== undefined && { "content-type": "application/json" }) }, ...(body !== undefined && { body: JSON.stringify(body) }) });
  return { status: response.status, json: response.status === 204 ? null : await response.json() };
}
/** The system prompt the fake model last received. */
async function lastSystemPrompt(): Promise<string> {
  const body = (await (await fetch(`${process.env.GENSERVE_E2E_UPSTREAM}/__last-request`)).json()) as { messages: { role: string; content: unknown }[] };
  return String(body.messages.find((m) => m.role === "system")?.content ?? "");
}

const SCHEMA = { type: "object", properties: { invoiceTotal: { type: "number" }, vendor: { type: "string" } }, required: ["invoiceTotal", "vendor"] };

/** Replaces the text of the Monaco editor inside `region`. */
async function typeInto(page: Page, region: ReturnType<Page["getByRole"]>, text: string) {
  const editor = region.locator(".monaco-editor").first();
  await editor.waitFor();
  await editor.click();
  await page.keyboard.press("ControlOrMeta+A");
  await page.keyboard.press("Delete");
  await page.keyboard.insertText(text);
}

test.describe("drafts at 1280×720", () => {
  test.use({ viewport: { width: 1280, height: 720 } });

  test("a draft's instructions reach the model, leave the versions unchanged, survive a reload, and save as the next version with a label", async ({ page }) => {
    expect((await api("PUT", "/api/v1/workflows/e2e-draft", { model: "fast", instructions: "SAVED INSTRUCTIONS", schema: SCHEMA })).status).toBe(201);
    const p = new PlaygroundPage(page);
    await p.open();
    await p.signIn();
    await p.operation().selectOption({ label: "Generate object" });
    await p.workflow().selectOption("e2e-draft");
    const prompt = page.getByRole("region", { name: "Prompt" });
    await expect(prompt.getByTestId("instructions-editor")).toContainText("SAVED INSTRUCTIONS");
    await expect(prompt.getByText("edited", { exact: true })).toHaveCount(0);
    await typeInto(page, prompt, "DRAFT INSTRUCTIONS: answer in capitals");
    await prompt.getByLabel("Temperature").fill("1.3");
    await expect(prompt.getByText("edited", { exact: true })).toBeVisible();
    await expect(prompt).toContainText("instructions, temperature changed");
    await p.input().fill("Invoice from Lampworks, total 99");
    await p.run();
    await expect(p.result().getByTestId("result-object")).toContainText('"invoiceTotal"');
    expect(await lastSystemPrompt()).toContain("DRAFT INSTRUCTIONS: answer in capitals");
    expect(await lastSystemPrompt()).not.toContain("SAVED INSTRUCTIONS");
    // Nothing was saved: one version, and the plain slug still runs it.
    expect((await api("GET", "/api/v1/workflows/e2e-draft/versions")).json.versions).toHaveLength(1);
    expect((await api("GET", "/api/v1/workflows/e2e-draft")).json.instructions).toBe("SAVED INSTRUCTIONS");
    // The run is stored as a draft run: marked in the runs table, its page shows the diff.
    const runs = (await api("GET", "/api/v1/runs?workflowSlug=e2e-draft")).json.runs;
    expect(runs[0].draft).toMatchObject({ base: "1", definition: { instructions: "DRAFT INSTRUCTIONS: answer in capitals", temperature: 1.3 } });
    await expectAccessible(page);
    await page.screenshot({ path: `${SHOTS}/draft-wide-light.png` });

    // The edits survive a reload, shown as edited.
    await page.reload();
    await p.workflow().selectOption("e2e-draft");
    await expect(prompt.getByText("edited", { exact: true })).toBeVisible();
    await expect(prompt.getByTestId("instructions-editor")).toContainText("DRAFT INSTRUCTIONS");

    // Save as version 2, moving staging to it, with a note.
    await prompt.getByRole("button", { name: "Save as version…" }).click();
    await prompt.getByLabel("What changed (the version's note)").fill("Capitals");
    await prompt.getByLabel("Move a label to it (optional)").fill("staging");
    await prompt.getByRole("button", { name: "Save as the next version" }).click();
    await expect(prompt.getByRole("status")).toHaveText("Saved as e2e-draft@2; staging points at it.");
    await expect(prompt.getByText("edited", { exact: true })).toHaveCount(0);
    const versions = (await api("GET", "/api/v1/workflows/e2e-draft/versions")).json.versions;
    expect(versions.map((v: { version: string; note: string | null; labels: string[] }) => [v.version, v.note, v.labels])).toEqual([
      ["1", null, []],
      ["2", "Capitals", ["staging"]],
    ]);
    expect((await api("GET", "/api/v1/workflows/e2e-draft@staging")).json).toMatchObject({ instructions: "DRAFT INSTRUCTIONS: answer in capitals", temperature: 1.3, version: "2" });

    await page.goto(`${BASE()}/runs/${runs[0].id}`);
    const draft = page.getByRole("region", { name: "Draft" });
    await expect(draft).toContainText("An unsaved draft of e2e-draft@1 ran");
    await expect(draft.getByLabel("Instructions diff")).toContainText("+DRAFT INSTRUCTIONS: answer in capitals");
    await expect(draft).toContainText("temperature: default → 1.3");
    await expectAccessible(page);
    await page.goto(`${BASE()}/runs`);
    await expect(page.getByRole("row").filter({ hasText: "e2e-draft" }).first().getByText("draft", { exact: true })).toBeVisible();
  });

  test('"Try this version" opens slug@N with that version\'s schema and prompt, and the run succeeds', async ({ page }) => {
    expect((await api("PUT", "/api/v1/workflows/e2e-try", { model: "fast", instructions: "VERSION ONE", schema: SCHEMA })).status).toBe(201);
    await api("PUT", "/api/v1/workflows/e2e-try", { model: "free", instructions: "VERSION TWO", schema: { type: "object", properties: { other: { type: "string" } }, required: ["other"] } });
    const p = new PlaygroundPage(page);
    await page.goto(`${BASE()}/workflows/e2e-try`);
    await p.signIn();
    await page.getByRole("link", { name: "Try this version" }).first().click();
    await expect(p.workflow()).toHaveValue("e2e-try@1");
    const prompt = page.getByRole("region", { name: "Prompt" });
    await expect(prompt.getByTestId("instructions-editor")).toContainText("VERSION ONE");
    await expect(prompt.getByLabel("Model")).toHaveValue("fast");
    await expect(p.schema().getByTestId("schema-editor")).toContainText("invoiceTotal");
    await p.operation().selectOption({ label: "Generate object" });
    await p.input().fill("Try me");
    await p.run();
    await expect(p.result().getByTestId("result-object")).toContainText('"invoiceTotal"');
    expect(await lastSystemPrompt()).toContain("VERSION ONE");
  });

  test("compare: A and B in columns side by side at 1280, both in view, deltas on top", async ({ page }) => {
    const p = new PlaygroundPage(page);
    await p.open();
    await p.signIn();
    await p.operation().selectOption({ label: "Stream object" });
    await p.workflow().selectOption("extract-invoice");
    await p.input().fill("Compare side by side");
    await p.typeSchema(JSON.stringify({ type: "object", properties: { name: { type: "string" }, legs: { type: "integer" } }, required: ["name", "legs"] }));
    await page.getByLabel("Compare with").selectOption({ label: "this prompt on free" });
    await p.run();
    const a = page.getByRole("region", { name: "Result A" });
    const b = page.getByRole("region", { name: "Result B" });
    // While streaming and after: both in view, next to each other.
    await expect(a).toBeInViewport();
    await expect(b).toBeInViewport();
    await expect(page.getByRole("region", { name: "Comparison" }).getByTestId("delta-cost")).toBeVisible({ timeout: 30_000 });
    await expect(a).toBeInViewport();
    await expect(b).toBeInViewport();
    const [boxA, boxB] = [(await a.boundingBox())!, (await b.boundingBox())!];
    expect(boxB.x).toBeGreaterThanOrEqual(boxA.x + boxA.width);
    expect(Math.abs(boxB.y - boxA.y)).toBeLessThan(2);
    await expect(b.getByRole("heading", { level: 2 })).toContainText("(free)");
    await expectNoSidewaysScroll(page);
    await expectAccessible(page);
    await page.screenshot({ path: `${SHOTS}/compare-wide-light.png` });

    // A third variant: C beside them (three columns; the composer steps aside), its own comparison on top.
    await page.getByRole("button", { name: "Add variant" }).click();
    await page.getByLabel("Variant C").selectOption({ label: "the same workflow again" });
    await p.run();
    await expect(page.getByRole("region", { name: "Comparison C" }).getByTestId("delta-cost")).toBeVisible({ timeout: 30_000 });
    await expect(page.getByRole("region", { name: "Result C" }).getByTestId("result-object")).toContainText('"legs"');
    await page.screenshot({ path: `${SHOTS}/compare3-wide-light.png` });
  });
});

test.describe("presenter view at 1920×1080", () => {
  test.use({ viewport: { width: 1920, height: 1080 } });

  test("one toggle and a shortcut: the result takes the full width in larger type", async ({ page }) => {
    const p = new PlaygroundPage(page);
    await p.open();
    await p.signIn();
    await p.operation().selectOption({ label: "Stream object" });
    await p.workflow().selectOption("extract-invoice");
    await p.input().fill("Present me");
    await p.run();
    await expect(p.result().getByTestId("result-object")).toContainText("{");
    const main = page.locator("main[data-workspace]");
    expect((await main.boundingBox())!.width).toBeLessThanOrEqual(1600);
    await page.keyboard.press("Control+Alt+KeyP");
    await expect(page.getByRole("button", { name: "Exit presenter" })).toHaveAttribute("aria-pressed", "true");
    await expect(page.locator("#composition")).toBeHidden();
    expect((await main.boundingBox())!.width).toBeGreaterThan(1900);
    expect((await p.result().boundingBox())!.width).toBeGreaterThan(1800);
    const size = await p.result().getByTestId("result-object").evaluate((e) => parseFloat(getComputedStyle(e.querySelector(".font-mono") ?? e).fontSize));
    expect(size).toBeGreaterThanOrEqual(18);
    await expectAccessible(page);
    await page.screenshot({ path: `${SHOTS}/presenter-1920-light.png` });
    await page.getByRole("button", { name: "Exit presenter" }).click();
    await expect(page.locator("#composition")).toBeVisible();
  });
});

// Screenshots of the prompt section and a comparison at every size, in both themes, to look at.
for (const size of [
  { name: "1280", width: 1280, height: 720 },
  { name: "1920", width: 1920, height: 1080 },
  { name: "390", width: 390, height: 844 },
]) {
  for (const scheme of ["light", "dark"] as const) {
    test.describe(`${size.name} ${scheme}`, () => {
      test.use({ viewport: { width: size.width, height: size.height }, colorScheme: scheme });
      test(`prompt section and comparison fit at ${size.width}×${size.height}, ${scheme}`, async ({ page }) => {
        const p = new PlaygroundPage(page);
        await p.open();
        await p.signIn();
        await p.operation().selectOption({ label: "Stream object" });
        await p.workflow().selectOption("extract-invoice");
        await expect(page.getByRole("region", { name: "Prompt" }).getByTestId("instructions-editor")).toContainText("invoice");
        await p.input().fill("Screenshot");
        await expectNoSidewaysScroll(page);
        await page.screenshot({ path: `${SHOTS}/prompt-${size.name}-${scheme}.png` });
        await page.getByLabel("Compare with").selectOption({ label: "the same workflow again" });
        await p.run();
        await p.showVariant("B");
        await expect(page.getByRole("region", { name: "Comparison" }).getByTestId("delta-cost")).toBeVisible({ timeout: 30_000 });
        await expectNoSidewaysScroll(page);
        await expectAccessible(page);
        await page.screenshot({ path: `${SHOTS}/compare-${size.name}-${scheme}.png` });
      });
    });
  }
}
