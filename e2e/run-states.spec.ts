import { expect, test } from "@playwright/test";
import { expectAccessible, PlaygroundPage, watchCspViolations } from "./pages";

const SHOTS = "docs/screenshots";

const cspViolations = new WeakMap<object, string[]>();
test.beforeEach(({ page }) => void cspViolations.set(page, watchCspViolations(page)));
test.afterEach(({ page }) => expect(cspViolations.get(page) ?? []).toEqual([]));

/** A schema whose one long enum value takes a while to stream from the fake upstream (40 ms a chunk). */
const SLOW_SCHEMA = JSON.stringify({
  type: "object",
  properties: { number: { type: "string" }, note: { type: "string", enum: ["a long note that takes a while to stream in, chunk after chunk after chunk, so that a run with a short deadline runs out of time before it ends"] } },
  required: ["number", "note"],
});

test.describe("a run's states in the playground", () => {
  test("streams with a live status (time, first item, tokens), then offers Copy and Download", async ({ page }) => {
    const p = new PlaygroundPage(page);
    await p.open();
    await p.signIn();
    await p.operation().selectOption({ label: "Stream object" });
    await p.workflow().selectOption("extract-invoice");
    await p.input().fill("Invoice INV-7");
    await p.typeSchema(SLOW_SCHEMA);
    await p.run();
    const status = p.result().getByTestId("run-status");
    await expect(status).toContainText(/Streaming \d+ ms|Streaming \d\.\d\d s/);
    await expect(status).toContainText(/first item \d+ ms/);
    await expect(status).toContainText(/~\d+ tok/);
    await expect(status).toContainText(/^Done /);
    await expect(p.result().getByRole("button", { name: "Copy output" })).toBeVisible();
    await expect(p.result().getByRole("button", { name: "Download output" })).toBeVisible();
    await expect(p.metadata().getByTestId("meta-cost")).toHaveText(/^\$\d/);
    await expect(p.metadata().getByTestId("meta-duration")).toHaveText(/^\d+ ms$|^\d\.\d\d s$/);
  });

  test("says in words why a run failed, and keeps its usage and timing", async ({ page }) => {
    const p = new PlaygroundPage(page);
    await p.open();
    await p.signIn();
    await p.operation().selectOption({ label: "Stream object" });
    // "slow" gives up after 500 ms; this output takes longer to stream.
    await p.workflow().selectOption("slow");
    await p.input().fill("Invoice INV-8");
    await p.typeSchema(SLOW_SCHEMA);
    await p.run();
    const alert = page.getByRole("alert").filter({ hasText: "The model timed out" });
    await expect(alert).toBeVisible();
    await expect(alert).toContainText("model_timeout");
    await expect(p.result().getByTestId("run-status")).toContainText(/^Failed after /);
    await expect(p.metadata().getByTestId("meta-run-id")).toContainText("run_");
    await expect(p.metadata().getByTestId("meta-duration")).not.toHaveText("—");
    await expect(p.metadata().getByTestId("meta-output-tokens")).not.toHaveText("—");
    await expectAccessible(page);
    await page.screenshot({ path: `${SHOTS}/playground-failed.png`, fullPage: true });
  });

  test("shows when a run was cancelled, with what had arrived", async ({ page }) => {
    const p = new PlaygroundPage(page);
    await p.open();
    await p.signIn();
    await p.operation().selectOption({ label: "Stream object" });
    await p.workflow().selectOption("extract-invoice");
    await p.input().fill("Invoice INV-9");
    await p.typeSchema(SLOW_SCHEMA);
    await p.run();
    await expect(p.result().getByTestId("result-object")).toContainText('"number"');
    await page.getByRole("button", { name: "Cancel", exact: true }).click();
    await expect(p.result().getByTestId("run-status")).toContainText(/^Cancelled at /);
    await expect(p.result().getByTestId("result-object")).toContainText('"number"');
  });

  test("starts dark without a white flash when dark was chosen, and the toggle says what it does", async ({ page }) => {
    const p = new PlaygroundPage(page);
    await p.open();
    await p.signIn();
    await page.getByRole("button", { name: "Dark theme" }).click();
    await expect(page.getByRole("button", { name: "Light theme" })).toBeVisible();
    // Reloaded: the class is on <html> in the document as served, before any React code runs.
    await page.route("**/_next/static/**", (route) => route.abort());
    await page.reload();
    await expect(page.locator("html")).toHaveClass(/dark/);
    await page.unroute("**/_next/static/**");
  });
});
