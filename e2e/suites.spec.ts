import { expect, test } from "@playwright/test";
import { INVOICE_SCHEMA } from "../test/helpers/config";
import { BASE, expectAccessible, KEY, PlaygroundPage, watchCspViolations } from "./pages";

const SHOTS = "docs/screenshots";

const cspViolations = new WeakMap<object, string[]>();
test.beforeEach(({ page }) => void cspViolations.set(page, watchCspViolations(page)));
test.afterEach(({ page }) => expect(cspViolations.get(page) ?? []).toEqual([]));

/** A finished object run made through the API, as a program would. */
async function objectRun(input: string): Promise<string> {
  const response = await fetch(`${BASE()}/api/v1/generate/object`, {
    method: "POST",
    headers: { "content-type": "application/json", "api-key": KEY() },
    body: JSON.stringify({ input, type: "event", callback: { url: "https://example.com/hooks" }, workflowSlug: "no-retry", schema: INVOICE_SCHEMA }),
  });
  expect(response.status).toBe(200);
  return response.headers.get("x-run-id")!;
}

test.describe("test suites", () => {
  test("saves a run as a test case with its fields editable, runs the suite and shows the matrix live", async ({ page }) => {
    const runId = await objectRun("Invoice E2E-1: one chair");
    const p = new PlaygroundPage(page);
    await page.goto(`${BASE()}/runs/${runId}`);
    await p.signIn();
    const save = page.getByRole("region", { name: "Save as test case" });
    await expect(save).toBeVisible();
    await save.getByLabel("Suite (existing or new)").fill("e2e-invoices");
    await save.getByLabel("Case name").fill("chair");
    // The output's fields become expectations: keep the currency, only require a number, drop the total.
    await expect(save.getByLabel("Expected value of /currency")).toHaveValue('"EUR"');
    await save.getByLabel("Check of /number").selectOption("present");
    await save.getByLabel("Check of /total").selectOption("skip");
    await expectAccessible(page);
    await save.getByRole("button", { name: "Save case" }).click();
    await expect(save.getByRole("status")).toContainText("Saved to e2e-invoices (v1).");

    // A second run saved into the same suite appends a case.
    const second = await objectRun("Invoice E2E-2: two desks");
    await page.goto(`${BASE()}/runs/${second}`);
    await save.getByLabel("Suite (existing or new)").fill("e2e-invoices");
    await save.getByLabel("Case name").fill("desks");
    await save.getByRole("button", { name: "Save case" }).click();
    await expect(save.getByRole("status")).toContainText("(v2)");
    await save.getByRole("link", { name: "e2e-invoices" }).click();

    await expect(page.getByRole("heading", { name: /e2e-invoices/ })).toBeVisible();
    await expect(page.getByTestId("suite-editor").locator(".monaco-editor")).toBeVisible();
    await page.getByRole("button", { name: "Run suite" }).click();
    const evaluation = page.getByRole("region", { name: "Evaluation" });
    await expect(evaluation.getByText("completed", { exact: true })).toBeVisible();
    await expect(evaluation.getByRole("status")).toContainText("2/2 runs");
    await expect(evaluation.getByRole("status")).toContainText("pass rate 100%");
    const matrix = evaluation.getByRole("table", { name: "Cases by field" });
    await expect(matrix.getByRole("rowheader", { name: "chair" })).toBeVisible();
    await expect(page.getByTestId("cell-0-/currency")).toHaveText("✓");
    await expect(page.getByTestId("cell-0-/currency")).toHaveAttribute("title", 'repeat 1: equals ✓ expected "EUR", got "EUR"');
    await expectAccessible(page);
    await page.screenshot({ path: `${SHOTS}/suites.png`, fullPage: true });

    // A second evaluation against the first: the baseline diff, and the two side by side.
    await page.getByRole("button", { name: "Run suite" }).click();
    await expect(evaluation.getByRole("region", { name: "Against the baseline" })).toBeVisible();
    await expect(evaluation.getByText("completed", { exact: true })).toBeVisible();
    await page.getByLabel("Side by side with").selectOption({ index: 1 });
    await expect(page.getByRole("region", { name: "Comparison of two evaluations" })).toContainText("pass rate");
    await expectAccessible(page);
  });

  test("creates a suite in the editor and shows each problem the API names, by its path", async ({ page }) => {
    const p = new PlaygroundPage(page);
    await page.goto(`${BASE()}/suites`);
    await p.signIn();
    await page.getByRole("button", { name: "New suite" }).click();
    await page.getByLabel("Slug").fill("e2e-broken");
    const editor = page.getByTestId("suite-editor").locator(".monaco-editor").first();
    await editor.waitFor();
    await editor.click();
    await page.keyboard.press("ControlOrMeta+A");
    await page.keyboard.press("Delete");
    await page.keyboard.insertText(JSON.stringify({ workflow: "no-retry", cases: [{ name: "a", input: "x", expect: { total: { equals: 1 }, "/n": { matches: "(?<=a)" } } }] }));
    // The shape is checked as it is typed (the same one the API uses).
    const problems = page.getByRole("list", { name: "Suite problems" });
    await expect(problems).toContainText("must be a JSON Pointer");
    await page.getByRole("button", { name: "Save" }).click();
    await expect(page.getByRole("alert").filter({ hasText: /./ }).first()).toHaveText("The suite is not valid.");
    await expect(problems).toContainText("/cases/0/expect/total");
    await expectAccessible(page);
  });
});
