import { expect, test, type Page } from "@playwright/test";
import { INVOICE_SCHEMA } from "../test/helpers/config";
import { BASE, expectAccessible, expectNoSidewaysScroll, KEY, PlaygroundPage, watchCspViolations } from "./pages";

// The suite's table editor beside its JSON view: one document, edited in either.

const cspViolations = new WeakMap<object, string[]>();
test.beforeEach(({ page }) => void cspViolations.set(page, watchCspViolations(page)));
test.afterEach(({ page }) => expect(cspViolations.get(page) ?? []).toEqual([]));

const DOC = {
  workflow: "no-retry",
  // Cases first: the JSON view shows them on its first screen.
  cases: [{ name: "chair", input: "Invoice T-1: one chair", expect: { "/currency": { equals: "USD" } } }],
  schema: INVOICE_SCHEMA,
};

async function suiteDocument(slug: string): Promise<{ cases: { name: string; input: string; expect?: Record<string, Record<string, unknown>> }[] }> {
  const response = await fetch(`${BASE()}/api/v1/suites/${slug}`, { headers: { "api-key": KEY() } });
  expect(response.status).toBe(200);
  return ((await response.json()) as { document: never }).document;
}

async function replaceJson(page: Page, text: string) {
  const editor = page.getByTestId("suite-editor").locator(".monaco-editor").first();
  await editor.waitFor();
  await editor.click();
  await page.keyboard.press("ControlOrMeta+A");
  await page.keyboard.press("Delete");
  await page.keyboard.insertText(text);
}

test("the table edits a case and an expectation, saves, the JSON view shows it, the suite runs with it", async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 720 });
  const p = new PlaygroundPage(page);
  await page.goto(`${BASE()}/suites`);
  await p.signIn();
  await page.getByRole("button", { name: "New suite" }).click();
  const slug = `e2e-table-${Date.now()}`;
  await page.getByLabel("Slug").fill(slug);
  const views = page.getByRole("group", { name: "Edit the suite as" });

  // Text the table cannot show keeps the JSON view, and says why.
  await replaceJson(page, '{"cases" 1}');
  await views.getByRole("button", { name: "Table" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "The table cannot show this document" })).toContainText("not valid JSON");
  await expect(views.getByRole("button", { name: "JSON" })).toHaveAttribute("aria-pressed", "true");
  await expect(page.getByTestId("suite-table")).toHaveCount(0);

  await replaceJson(page, JSON.stringify(DOC));
  await views.getByRole("button", { name: "Table" }).click();
  await expect(views.getByRole("button", { name: "Table" })).toHaveAttribute("aria-pressed", "true");
  const table = page.getByTestId("suite-table");
  await expect(table.getByLabel("Case 1 name")).toHaveValue("chair");
  await expect(table.getByLabel("Case 1 input")).toHaveValue("Invoice T-1: one chair");
  await expect(table.getByLabel("Case 1 expectation 1 field")).toHaveValue("/currency");
  await expect(table.getByLabel("Case 1 expectation 1 check")).toHaveValue("equals");
  await expect(table.getByLabel("Case 1 expectation 1 expected value")).toHaveValue("USD");

  // Edit the case and its expectation; Enter in the value adds an expectation under it, focused.
  await table.getByLabel("Case 1 name").fill("one chair");
  await table.getByLabel("Case 1 expectation 1 expected value").fill("EUR");
  await table.getByLabel("Case 1 expectation 1 expected value").press("Enter");
  await expect(table.getByLabel("Case 1 expectation 2 field")).toBeFocused();
  await page.keyboard.insertText("/total");
  await page.keyboard.press("Tab");
  await expect(table.getByLabel("Case 1 expectation 2 check")).toBeFocused();
  await table.getByLabel("Case 1 expectation 2 check").selectOption("min");
  await table.getByLabel("Case 1 expectation 2 expected value").fill("0");
  // Enter in a name adds a case after it; a duplicate gets a name of its own.
  await table.getByLabel("Case 1 name").press("Enter");
  await expect(table.getByLabel("Case 2 name")).toBeFocused();
  await table.getByLabel("Case 2 name").fill("desk");
  await table.getByLabel("Case 2 input").fill("Invoice T-2: a desk\nsecond line");
  await table.getByLabel("Case 2 expectation 1 check").selectOption("present");
  await table.getByLabel("Case 2 expectation 1 field").fill("/number");
  await table.getByRole("button", { name: "Duplicate case 2" }).click();
  await expect(table.getByLabel("Case 3 name")).toHaveValue("desk (copy)");
  await table.getByRole("button", { name: "Remove case 3", exact: true }).click();
  await expect(table.getByLabel("Case 3 name")).toHaveCount(0);
  await expectAccessible(page);
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  await page.getByRole("region", { name: "Suite document" }).evaluate((e) => e.scrollIntoView({ block: "start" }));
  await page.screenshot({ path: "docs/screenshots/suite-table.png" });

  // The JSON view shows the same document (before saving: one document, two views).
  await page.getByRole("group", { name: "Edit the suite as" }).getByRole("button", { name: "JSON" }).click();
  const json = page.getByTestId("suite-editor");
  await expect(json).toContainText('"one chair"');
  await expect(json).toContainText('"min": 0');
  await expect(json).toContainText('"equals": "EUR"');

  // An edit in the JSON view shows in the table.
  const edited = {
    workflow: "no-retry",
    cases: [
      { name: "one chair", input: "Invoice T-1: one chair", expect: { "/currency": { oneOf: ["EUR", "USD"] }, "/total": { min: 0 } } },
      { name: "desk", input: "Invoice T-2: a desk\nsecond line", expect: { "/number": { present: true } } },
    ],
    schema: INVOICE_SCHEMA,
  };
  await replaceJson(page, JSON.stringify(edited));
  await page.getByRole("group", { name: "Edit the suite as" }).getByRole("button", { name: "Table" }).click();
  await expect(page.getByTestId("suite-table").getByLabel("Case 1 expectation 1 check")).toHaveValue("oneOf");
  await expect(page.getByTestId("suite-table").getByLabel("Case 1 expectation 1 expected value")).toHaveValue('["EUR","USD"]');

  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByRole("heading", { name: new RegExp(slug) })).toContainText("v1");
  const saved = await suiteDocument(slug);
  expect(saved.cases).toEqual(edited.cases);

  await page.getByRole("button", { name: "Run suite" }).click();
  const evaluation = page.getByRole("region", { name: "Evaluation" });
  await expect(evaluation.getByText("completed", { exact: true })).toBeVisible();
  await expect(evaluation.getByRole("status")).toContainText("2/2 runs");
  await expect(evaluation.getByRole("status")).toContainText("pass rate 100%");
  await expect(evaluation.getByRole("table", { name: "Cases by field" }).getByRole("rowheader", { name: "one chair" })).toBeVisible();
});

for (const size of [
  { width: 1280, height: 720, dark: true },
  { width: 390, height: 844, dark: false },
  { width: 390, height: 844, dark: true },
]) {
  test(`the table editor fits and passes axe (${size.width}×${size.height}${size.dark ? ", dark" : ""})`, async ({ page }) => {
    const slug = `e2e-table-view-${size.width}-${size.dark ? "dark" : "light"}`;
    const put = await fetch(`${BASE()}/api/v1/suites/${slug}`, {
      method: "PUT",
      headers: { "content-type": "application/json", "api-key": KEY() },
      body: JSON.stringify({ ...DOC, cases: [DOC.cases[0], { name: "two", input: "Invoice T-3: two lamps", expect: { "/total": { min: 0, max: 1000 }, "/number": { matches: "^.+$" }, "/lines": { absent: true } } }] }),
    });
    expect(put.status).toBeLessThan(300);
    await page.setViewportSize(size);
    await page.emulateMedia({ colorScheme: size.dark ? "dark" : "light" });
    await page.goto(`${BASE()}/suites?suite=${slug}`);
    await new PlaygroundPage(page).signIn();
    await page.getByRole("group", { name: "Edit the suite as" }).getByRole("button", { name: "Table" }).click();
    const table = page.getByTestId("suite-table");
    await expect(table.getByLabel("Case 2 expectation 3 expected value")).toHaveValue("^.+$");
    await expect(table.getByLabel("Case 2 expectation 2 check")).toHaveValue("max");
    await table.getByLabel("Case 2 name").scrollIntoViewIfNeeded();
    await expect(table.getByLabel("Case 2 expectation 1 field")).toBeInViewport();
    await expectNoSidewaysScroll(page);
    await expectAccessible(page);
    await page.screenshot({ path: `test-results/suite-table-${size.width}${size.dark ? "-dark" : ""}.png` });
  });
}
