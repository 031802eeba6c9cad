import { expect, test, type Page } from "@playwright/test";
import { BASE, expectAccessible, KEY, PlaygroundPage, watchCspViolations } from "./pages";

/**
 * What a new user hit in the playground (issue 32, parts 2, 4 and 5): keyboard, a result left
 * under another workflow, raw deltas of earlier runs, a model that cannot run. Screenshots go to
 * SHOTS (outside the repository) at three sizes in both themes.
 */
const SHOTS = process.env.GENSERVE_SHOTS ?? "/tmp/i-defects-shots";

const cspViolations = new WeakMap<object, string[]>();
test.beforeEach(({ page }) => void cspViolations.set(page, watchCspViolations(page)));
test.afterEach(({ page }) => expect(cspViolations.get(page) ?? []).toEqual([]));

const EXAMPLE = { input: "Invoice INV-42 from Lampworks, 99.00 EUR", schema: { type: "object", properties: { number: { type: "string" } }, required: ["number"] } };

test.beforeAll(async () => {
  const put = await fetch(`${BASE()}/api/v1/workflows/e2e-defects`, {
    method: "PUT",
    headers: { "content-type": "application/json", "api-key": KEY() },
    body: JSON.stringify({ model: "fast", description: "Issue 32's checks", example: EXAMPLE }),
  });
  expect(put.status).toBeLessThan(300);
});

const SCHEMA = '{"type": "object", "properties": {"number": {"type": "string"}}, "required": ["number"]}';

/** Presses Tab (or Shift+Tab) until the focused element matches, as a keyboard user would. */
async function tabUntil(page: Page, matches: (el: { tag: string; id: string; name: string; role: string | null; inEditor: boolean }) => boolean, what: string, back = false): Promise<void> {
  for (let i = 0; i < 200; i++) {
    await page.keyboard.press(back ? "Shift+Tab" : "Tab");
    const el = await page.evaluate(() => {
      const a = document.activeElement as HTMLElement;
      return { tag: a.tagName.toLowerCase(), name: (a.getAttribute("aria-label") ?? a.textContent ?? "").trim(), role: a.getAttribute("role"), inEditor: Boolean(a.closest(".monaco-editor")), id: a.id };
    });
    if (matches(el)) return;
  }
  throw new Error(`Tab never reached ${what}`);
}

const focused = (page: Page) =>
  page.evaluate(() => {
    const a = document.activeElement as HTMLElement;
    return { tag: a.tagName.toLowerCase(), id: a.id, text: (a.textContent ?? "").trim(), inEditor: Boolean(a.closest(".monaco-editor")) };
  });

test.describe("by keyboard alone", () => {
  test("sign in, pick a workflow, type, edit the schema, leave it with Esc Tab, run, copy from the Code menu", async ({ page, context }) => {
    await context.grantPermissions(["clipboard-read", "clipboard-write"]);
    const p = new PlaygroundPage(page);
    await p.open();
    // Sign in: the key field, typed, Enter.
    await tabUntil(page, (el) => el.id === "api-key", "the API key field");
    await expect(page.getByLabel("API key")).toBeFocused();
    await page.keyboard.type(KEY());
    await page.keyboard.press("Enter");
    // Focus lands on the page's heading, not on <body>.
    await expect(page.getByRole("heading", { name: "Playground", level: 1 })).toBeFocused();
    // Operation, then workflow: chosen with the arrow keys.
    await page.keyboard.press("Tab");
    await expect(p.operation()).toBeFocused();
    await page.keyboard.press("Tab");
    await expect(p.workflow()).toBeFocused();
    // The arrow keys walk the options (typeahead is timing-sensitive on a busy machine).
    await p.workflow().press("Home");
    for (let i = 0; i < 40 && (await p.workflow().inputValue()) !== "e2e-defects"; i++) await p.workflow().press("ArrowDown");
    await expect(p.workflow()).toHaveValue("e2e-defects");
    await tabUntil(page, (el) => el.tag === "textarea" && !el.inEditor, "the input");
    await expect(p.input()).toBeFocused();
    await page.keyboard.type("Invoice INV-5");
    // Into the schema editor: Tab indents there…
    await tabUntil(page, (el) => el.inEditor, "the schema editor");
    await page.keyboard.press("ControlOrMeta+A");
    await page.keyboard.press("Delete");
    await page.keyboard.insertText(SCHEMA);
    await page.keyboard.press("Tab");
    expect((await focused(page)).inEditor).toBe(true);
    await page.keyboard.press("Backspace");
    // …and Esc then Tab leaves it.
    await page.keyboard.press("Escape");
    await page.keyboard.press("Tab");
    expect((await focused(page)).inEditor).toBe(false);
    await page.keyboard.press("ControlOrMeta+Enter");
    await expect(p.result().getByTestId("run-status")).toContainText(/^Done /);
    // The Code menu: Enter opens it on its first item, arrows move, Esc closes it back on the button.
    const code = page.getByRole("button", { name: "Code" });
    await tabUntil(page, (el) => el.name.startsWith("Code"), "the Code menu");
    await expect(code).toBeFocused();
    await page.keyboard.press("Enter");
    await expect(page.getByRole("menuitem", { name: "Copy as curl" })).toBeFocused();
    await page.keyboard.press("ArrowDown");
    await expect(page.getByRole("menuitem", { name: "Copy as fetch" })).toBeFocused();
    await page.keyboard.press("End");
    await expect(page.getByRole("menuitem", { name: "Copy permalink" })).toBeFocused();
    await page.keyboard.press("ArrowDown");
    await expect(page.getByRole("menuitem", { name: "Copy as curl" })).toBeFocused();
    await page.keyboard.press("Escape");
    await expect(page.getByRole("menu")).toBeHidden();
    await expect(code).toBeFocused();
    await page.keyboard.press("ArrowDown");
    await expect(page.getByRole("menuitem", { name: "Copy as curl" })).toBeFocused();
    await page.keyboard.press("Enter");
    await expect(code).toBeFocused();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toContain("curl");
    await expectAccessible(page);
  });
});

test.describe("switching what runs", () => {
  test("another workflow or operation clears the last result; the example is offered over other text", async ({ page }) => {
    const p = new PlaygroundPage(page);
    await p.open();
    await p.signIn();
    await p.operation().selectOption({ label: "Generate object" });
    await p.workflow().selectOption("e2e-defects");
    await p.input().fill("Invoice INV-3");
    await p.typeSchema(SCHEMA);
    await p.run();
    await expect(p.result().getByText("Valid against schema")).toBeVisible();
    await p.workflow().selectOption("extract-invoice");
    await expect(p.result().getByText("Valid against schema")).toBeHidden();
    await expect(p.result()).toContainText("Run a workflow to see its output here.");
    await p.run();
    await expect(p.result().getByTestId("run-status")).toContainText(/^Done /);
    await p.operation().selectOption({ label: "Generate text" });
    await expect(p.result()).toContainText("Run a workflow to see its output here.");
    // The example is offered while what is there is not it — here, over the typed input.
    await p.workflow().selectOption("e2e-defects");
    await page.getByRole("button", { name: "Replace with the example" }).click();
    await expect(p.input()).toHaveValue(EXAMPLE.input);
    await expect(page.getByRole("button", { name: /example/ })).toBeHidden();
  });

  test("Raw deltas are this run's only", async ({ page }) => {
    const p = new PlaygroundPage(page);
    await p.open();
    await p.signIn();
    await p.operation().selectOption({ label: "Stream object" });
    await p.workflow().selectOption("extract-invoice");
    await p.input().fill("Invoice INV-8");
    await p.typeSchema(SCHEMA);
    for (let i = 0; i < 3; i++) {
      await p.run();
      await expect(p.result().getByTestId("run-status")).toContainText(/^Done /);
    }
    await p.result().getByRole("tab", { name: "Raw deltas" }).click();
    const raw = await p.result().getByRole("log").innerText();
    // One JSON document, not three joined.
    expect(() => JSON.parse(raw)).not.toThrow();
    expect(raw.match(/"number"/g)).toHaveLength(1);
  });
});

test.describe("attachments", () => {
  test("Attach is beside the input; an image for a model without vision is refused before Run", async ({ page }) => {
    const p = new PlaygroundPage(page);
    await p.open();
    await p.signIn();
    await p.operation().selectOption({ label: "Generate text" });
    await p.workflow().selectOption("extract-invoice");
    await p.input().fill("What is in the picture?");
    const attach = page.getByLabel("Attach files");
    await expect(page.locator('label[for="files"]')).toBeInViewport();
    // Right under the input, not under the schema or in Advanced.
    const inputBox = (await p.input().boundingBox())!;
    const attachBox = (await page.locator('label[for="files"]').boundingBox())!;
    expect(attachBox.y - (inputBox.y + inputBox.height)).toBeLessThan(80);
    const png = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==", "base64");
    await attach.setInputFiles({ name: "pixel.png", mimeType: "image/png", buffer: png });
    const refusal = page.locator("#attachments-refused");
    await expect(refusal).toContainText("does not take images");
    const run = page.getByRole("button", { name: "Run", exact: true });
    await expect(run).toBeDisabled();
    await expect(run).toHaveAccessibleDescription("Model “fast” does not take images");
    // A workflow on a vision model takes it.
    await p.workflow().selectOption("look");
    await expect(refusal).toBeHidden();
    await expect(run).toBeEnabled();
    await p.workflow().selectOption("extract-invoice");
    await page.getByRole("button", { name: "Remove pixel.png" }).click();
    await expect(run).toBeEnabled();
    await expectAccessible(page);
  });
});

test.describe("a validation failure", () => {
  test("marks the output's failing field, not the schema", async ({ page }) => {
    const p = new PlaygroundPage(page);
    await p.open();
    await p.signIn();
    await p.operation().selectOption({ label: "Generate object" });
    await p.workflow().selectOption("no-retry");
    await p.input().fill("Invoice INV-11");
    // The fake model writes "text" for a string: this pattern fails it.
    await p.typeSchema('{"type": "object", "properties": {"number": {"type": "string", "pattern": "^INV-[0-9]+$"}}, "required": ["number"]}');
    await p.run();
    await expect(p.result().getByTestId("run-status")).toContainText(/^Failed after /);
    await expect(p.result().locator('[data-path="/number"][data-mark="danger"]')).toBeVisible();
    // The schema is fine: no error list under it, no red underline in it.
    await expect(page.getByRole("list", { name: "Schema problems" })).toBeHidden();
    await expect(p.schema().locator(".squiggly-error")).toHaveCount(0);
  });
});

test.describe("a workflow whose model is unavailable", () => {
  for (const size of [
    { width: 1280, height: 720, dark: false },
    { width: 390, height: 844, dark: true },
  ]) {
    test(`Run is off with the reason; the banner is compact (${size.width}×${size.height})`, async ({ page }) => {
      await page.setViewportSize(size);
      await page.emulateMedia({ colorScheme: size.dark ? "dark" : "light" });
      const p = new PlaygroundPage(page);
      await p.open();
      // The sign-in page says where the first admin key was printed.
      await expect(page.getByText(/printed an admin key/)).toBeVisible();
      await page.screenshot({ path: `${SHOTS}/sign-in-${size.width}${size.dark ? "-dark" : ""}.png` });
      await p.signIn();
      await p.operation().selectOption({ label: "Generate text" });
      await p.workflow().selectOption("no-model");
      await p.input().fill("Hello");
      const banner = page.getByRole("alert").filter({ hasText: "is not available" });
      await expect(banner).toBeVisible();
      const run = page.getByRole("button", { name: "Run", exact: true });
      await expect(run).toBeDisabled();
      await expect(run).toHaveAccessibleDescription("Model “gone” is not available");
      await expect(page.locator("#run-blocked").filter({ visible: true })).toHaveText("Model “gone” is not available");
      // Compact: the input is still on the first screen of a phone.
      expect((await banner.boundingBox())!.height).toBeLessThan(120);
      await expect(p.input()).toBeInViewport();
      const runsBefore = await runCount();
      await page.keyboard.press("ControlOrMeta+Enter");
      await banner.getByText("Why, and how to fix it").click();
      await expect(banner).toContainText("no-such-model.gguf");
      await expect(banner.getByRole("link", { name: "Configuring models" })).toHaveAttribute("href", "/docs#configure-models");
      await expectAccessible(page);
      await page.screenshot({ path: `${SHOTS}/model-unavailable-${size.width}${size.dark ? "-dark" : ""}.png` });
      expect(await runCount()).toBe(runsBefore);
      await banner.getByRole("link", { name: "Configuring models" }).click();
      await expect(page.getByRole("heading", { name: "Configuring models" })).toBeInViewport();
    });
  }
});

async function runCount(): Promise<number> {
  const page = (await (await fetch(`${BASE()}/api/v1/runs?workflowSlug=no-model&limit=100`, { headers: { "api-key": KEY() } })).json()) as { runs: unknown[] };
  return page.runs.length;
}

test("the phone's navigation is two rows, its links one row that scrolls sideways", async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  const p = new PlaygroundPage(page);
  await p.open();
  await p.signIn();
  const nav = page.getByRole("navigation", { name: "Main" });
  const links = nav.getByRole("link");
  const tops = new Set(await links.evaluateAll((all) => all.map((a) => Math.round(a.getBoundingClientRect().top))));
  expect(tops.size).toBe(1);
  expect((await nav.boundingBox())!.height).toBeLessThan(100);
  await expect(nav.getByRole("link", { name: "Playground" })).toBeInViewport();
  await expectAccessible(page);
});

test("a suite's page: results above the editor, expected and actual in the cells linking to their runs, the suite's repeat kept", async ({ page }) => {
  const put = await fetch(`${BASE()}/api/v1/suites/e2e-team`, {
    method: "PUT",
    headers: { "content-type": "application/json", "api-key": KEY() },
    body: JSON.stringify({
      workflow: "no-retry",
      repeat: 2,
      schema: { type: "object", properties: { number: { type: "string" } }, required: ["number"] },
      cases: [{ name: "wrong number", input: "Invoice X-1", expect: { "/number": { equals: "X-1" } } }],
    }),
  });
  expect(put.status, await put.text()).toBeLessThan(300);
  const p = new PlaygroundPage(page);
  await page.goto(`${BASE()}/suites`);
  await p.signIn();
  await page.getByRole("button", { name: "e2e-team" }).click();
  await expect(page.getByLabel("Repeat")).toHaveAttribute("placeholder", "2");
  await page.getByRole("button", { name: "Run suite" }).click();
  const evaluation = page.getByRole("region", { name: "Evaluation", exact: true });
  await expect(evaluation.getByText("completed", { exact: true })).toBeVisible();
  // The suite's repeat (2), not the form's.
  await expect(evaluation.getByRole("status")).toContainText("2/2 runs");
  // Expected vs actual in the cell itself, and the cell a link to the run.
  const detail = page.getByTestId("cell-detail-0-/number");
  await expect(detail).toHaveText(/^expected "X-1" · got "/);
  const link = page.getByRole("link", { name: /^wrong number \/number: repeat/ });
  await expect(link).toHaveAttribute("href", /^\/runs\/run_/);
  // Results above the editor.
  const editorTop = (await page.getByTestId("suite-editor").boundingBox())!.y;
  expect((await evaluation.boundingBox())!.y).toBeLessThan(editorTop);
  await expectAccessible(page);
  await link.click();
  await expect(page).toHaveURL(/\/runs\/run_/);
});

test("label history names the key and links the evaluation that gated the move", async ({ page }) => {
  const headers = { "content-type": "application/json", "api-key": KEY() };
  const me = (await (await fetch(`${BASE()}/api/v1/me`, { headers })).json()) as { name: string };
  // A version of its own and a suite that passes on it.
  const put = await fetch(`${BASE()}/api/v1/workflows/e2e-gated`, { method: "PUT", headers, body: JSON.stringify({ model: "fast", description: "Gated" }) });
  expect(put.status).toBeLessThan(300);
  const version = ((await put.json()) as { version: number | string }).version;
  const suite = await fetch(`${BASE()}/api/v1/suites/e2e-gate`, {
    method: "PUT",
    headers,
    body: JSON.stringify({ workflow: "e2e-gated", cases: [{ name: "says something", input: "Hello", expect: { "": { present: true } } }] }),
  });
  expect(suite.status, await suite.text()).toBeLessThan(300);
  const promote = await fetch(`${BASE()}/api/v1/workflows/e2e-gated/labels/staging`, { method: "POST", headers, body: JSON.stringify({ version: String(version), requireSuite: "e2e-gate" }) });
  expect(promote.status, await promote.clone().text()).toBeLessThan(300);
  const { evaluationId } = (await promote.json()) as { evaluationId: string };
  const p = new PlaygroundPage(page);
  await page.goto(`${BASE()}/workflows/e2e-gated`);
  await p.signIn();
  const history = page.getByRole("table").filter({ hasText: "Gate" });
  await expect(history.getByRole("row").nth(1)).toContainText(me.name, { timeout: 30_000 });
  const gate = history.getByRole("link", { name: new RegExp(evaluationId) });
  await gate.click();
  await expect(page.getByRole("heading", { name: /e2e-gate/ })).toBeVisible();
  await expect(page.getByRole("region", { name: "Evaluation", exact: true })).toContainText(evaluationId);
});
