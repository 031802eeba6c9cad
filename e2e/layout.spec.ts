import { expect, test, type Page } from "@playwright/test";
import { HOLD_MARKER } from "../test/helpers/fake-upstream";
import { BASE, expectAccessible, expectNoSidewaysScroll, KEY, PlaygroundPage, watchCspViolations } from "./pages";

/**
 * The playground's states at a laptop's size (1280×720, light) and a phone's (390×844, dark): Run
 * and the status in view without scrolling, nothing scrolling sideways, and a screenshot of each
 * state for docs/screenshots.
 */
const SHOTS = "docs/screenshots";
const SIZES = [
  { name: "wide", width: 1280, height: 720, dark: false },
  { name: "narrow", width: 390, height: 844, dark: true },
] as const;

const cspViolations = new WeakMap<object, string[]>();
test.beforeEach(({ page }) => void cspViolations.set(page, watchCspViolations(page)));
test.afterEach(({ page }) => expect(cspViolations.get(page) ?? []).toEqual([]));

const EXAMPLE = {
  input: "Invoice INV-42 from Lampworks: three desk lamps at 33.00 EUR, total 99.00 EUR, due 2026-12-31.",
  schema: {
    type: "object",
    properties: {
      number: { type: "string" },
      vendor: { type: "string" },
      total: { type: "number" },
      lines: { type: "array", items: { type: "object", properties: { item: { type: "string" }, amount: { type: "number" } }, required: ["item", "amount"] }, minItems: 2 },
      note: { type: "string", enum: ["a note long enough that it streams in over many chunks, so the run stays live for a moment"] },
    },
    required: ["number", "vendor", "total", "lines", "note"],
  },
};

/** A schema the fake model's answer does not meet (its "number" is "text"): the run fails validation. */
const STRICT_SCHEMA = {
  type: "object",
  properties: { number: { type: "string", pattern: "^INV-[0-9]+$" }, total: { type: "number", minimum: 1 } },
  required: ["number", "total"],
};

test.beforeAll(async () => {
  const put = await fetch(`${BASE()}/api/v1/workflows/e2e-invoice`, {
    method: "PUT",
    headers: { "content-type": "application/json", "api-key": KEY() },
    body: JSON.stringify({ model: "fast", description: "Invoices, with an example to start from", example: EXAMPLE }),
  });
  expect(put.status).toBeLessThan(300);
});

/** The run's status where it is visible: in the result pane, or in the bar on a narrow screen. */
const visibleStatus = (page: Page) => page.getByTestId("run-status").filter({ visible: true }).first();

for (const size of SIZES) {
  test.describe(`the playground at ${size.width}×${size.height}${size.dark ? ", dark" : ""}`, () => {
    test.use({ viewport: { width: size.width, height: size.height }, colorScheme: size.dark ? "dark" : "light" });

    test("Run and the status in view after sign-in; the example loads in one click and streams live", async ({ page }) => {
      const p = new PlaygroundPage(page);
      await p.open();
      await p.signIn();
      await p.operation().selectOption({ label: "Stream object" });
      await p.workflow().selectOption("e2e-invoice");
      await p.input().fill("");
      const run = page.getByRole("button", { name: "Run", exact: true });
      await expect(run).toBeInViewport();
      await expect(visibleStatus(page)).toBeInViewport();
      await expect(visibleStatus(page)).toContainText("Ready");
      await expectNoSidewaysScroll(page);
      await expectAccessible(page);
      await page.screenshot({ path: `${SHOTS}/state-${size.name}-empty.png` });

      await page.getByRole("button", { name: "Load example (input and schema)" }).click();
      await expect(p.input()).toHaveValue(EXAMPLE.input);
      // Live: the token count grows while the object streams in. Every status the page draws is
      // recorded as it is drawn, so a short stream on a busy machine cannot end between two polls.
      await page.evaluate(() => {
        const seen: string[] = [];
        (window as unknown as { statusSeen: string[] }).statusSeen = seen;
        new MutationObserver(() => {
          for (const el of document.querySelectorAll('[data-testid="run-status"]')) seen.push(el.textContent ?? "");
        }).observe(document.body, { subtree: true, childList: true, characterData: true });
      });
      await p.run();
      const status = visibleStatus(page);
      await expect(status).toContainText(/^Done /);
      const seen = await page.evaluate(() => (window as unknown as { statusSeen: string[] }).statusSeen);
      const live = seen.filter((text) => /Streaming (\d+ ms|\d\.\d\d s)/.test(text));
      const counts = live.map((text) => Number(/~(\d+) tok/.exec(text)?.[1] ?? NaN)).filter((n) => !Number.isNaN(n));
      expect(new Set(counts).size, live.join(" | ")).toBeGreaterThan(1);
      expect(Math.max(...counts)).toBeGreaterThan(counts[0]!);
      await expect(p.result()).toBeInViewport();
      await expect(p.result().getByRole("button", { name: "Copy output" })).toBeVisible();
      await expect(p.result().getByTestId("result-object")).toContainText('"vendor"');
      // Folding: the lines array folds to one line and opens again.
      await p.result().getByRole("button", { name: "Fold /lines", exact: true }).click();
      await expect(p.result().getByTestId("result-object")).toContainText("2 items");
      await p.result().getByRole("button", { name: "Unfold /lines", exact: true }).click();
      await expectNoSidewaysScroll(page);
      await expectAccessible(page);
      await page.screenshot({ path: `${SHOTS}/state-${size.name}-done.png` });
    });

    test("a failed run: a readable headline, Retry and Edit schema, the last output marked where it fails, usage kept", async ({ page }) => {
      const p = new PlaygroundPage(page);
      await p.open();
      await p.signIn();
      await p.operation().selectOption({ label: "Generate object" });
      await p.workflow().selectOption("no-retry");
      await p.input().fill("Invoice INV-8");
      await p.typeSchema(JSON.stringify(STRICT_SCHEMA));
      await p.run();
      const alert = page.getByRole("alert").filter({ hasText: "The model did not produce valid output" });
      await expect(alert).toBeInViewport();
      await expect(alert.getByRole("button", { name: "Retry" })).toBeVisible();
      await expect(visibleStatus(page)).toContainText(/^Failed after /);
      // The model's last output, its failing field marked with the reason.
      const output = p.result().getByTestId("result-object");
      await expect(output).toContainText('"number": "text"');
      await expect(output.locator('[data-path="/number"][data-mark="danger"]')).toContainText('"text"');
      await expect(p.metadata().getByTestId("meta-output-tokens")).not.toHaveText("—");
      await expect(p.metadata().getByTestId("meta-duration")).not.toHaveText("—");
      await expectNoSidewaysScroll(page);
      await expectAccessible(page);
      await page.screenshot({ path: `${SHOTS}/state-${size.name}-failed.png` });
      // Edit schema: back to the schema, which is not marked as broken (the output is what failed).
      await alert.getByRole("button", { name: "Edit schema" }).click();
      await expect(p.schema()).toBeInViewport();
      await expect(page.getByRole("list", { name: "Schema problems" })).toBeHidden();
    });

    test("a cancelled stream: a chip with the time, and what had arrived, dimmed", async ({ page }) => {
      const p = new PlaygroundPage(page);
      await p.open();
      await p.signIn();
      await p.operation().selectOption({ label: "Stream object" });
      await p.workflow().selectOption("e2e-invoice");
      await page.getByRole("button", { name: "Load example (input and schema)" }).click();
      // The fake model stalls mid-object when asked to, so Cancel cannot race the end of the stream.
      await p.input().fill(`${EXAMPLE.input} ${HOLD_MARKER}`);
      await p.run();
      await expect(p.result().getByTestId("result-object")).toContainText('"number"');
      await expect(visibleStatus(page)).toContainText(/Streaming (\d+ ms|\d\.\d\d s)/);
      await page.screenshot({ path: `${SHOTS}/state-${size.name}-streaming.png` });
      await page.getByRole("button", { name: "Cancel", exact: true }).click();
      await expect(visibleStatus(page)).toContainText(/^Cancelled at /);
      await expect(p.result().getByRole("log")).toHaveAttribute("data-partial", "true");
      await expectNoSidewaysScroll(page);
      await expectAccessible(page);
      await page.screenshot({ path: `${SHOTS}/state-${size.name}-cancelled.png` });
    });

    test("runs as a trace table: searched, filtered, a row opens the run, whose page shows what the model returned", async ({ page }) => {
      // A failed run to find, made as a program would.
      const marker = `trace-${size.name}-${Date.now()}`;
      const failed = await page.request.post(`${BASE()}/api/v1/generate/object`, {
        headers: { "api-key": KEY() },
        data: { input: `Invoice ${marker}`, type: "event", workflowSlug: "no-retry", schema: STRICT_SCHEMA, callback: { url: "https://example.com/hook" } },
      });
      expect(failed.status()).toBe(502);
      const p = new PlaygroundPage(page);
      await p.open();
      await p.signIn();
      await page.getByRole("link", { name: "Runs", exact: true }).click();
      await page.getByLabel("Search runs").fill(marker);
      const rows = page.getByRole("region", { name: "Runs table" }).getByRole("row");
      await expect(rows).toHaveCount(2); // the header and the one run
      await expect(rows.nth(1)).toContainText("failed");
      await expect(rows.nth(1)).toContainText(/just now|min ago/);
      await page.getByRole("button", { name: "Succeeded" }).click();
      await expect(page.getByText("No runs match.")).toBeVisible();
      await page.getByRole("button", { name: "Failed" }).click();
      await expect(rows).toHaveCount(2);
      await expectNoSidewaysScroll(page);
      await expectAccessible(page);
      await page.screenshot({ path: `${SHOTS}/runs-${size.name}.png` });
      await rows.nth(1).locator("td").first().click();
      await expect(page.getByRole("heading", { level: 1 })).toContainText("failed");
      await expect(page.getByRole("alert").filter({ hasText: "The model did not produce valid output" })).toBeVisible();
      const output = page.getByRole("region", { name: "Output" });
      await expect(output).toContainText("What the model returned");
      await expect(output.locator('[data-path="/number"][data-mark="danger"]')).toContainText('"text"');
      await expect(page.getByRole("region", { name: "Input" })).toContainText(marker);
      await page.getByRole("tab", { name: "Schema" }).click();
      await expect(page.getByRole("tabpanel", { name: "Schema" })).toContainText("^INV-[0-9]+$");
      await page.getByRole("tab", { name: "Deliveries" }).click();
      await expect(page.getByRole("tabpanel", { name: "Deliveries" })).toContainText("example.com/hook");
      await expectNoSidewaysScroll(page);
      await expectAccessible(page);
      await page.screenshot({ path: `${SHOTS}/run-detail-${size.name}.png`, fullPage: true });
    });

    test("compare: columns named by workflow and model, deltas on top, differences marked in both outputs", async ({ page }) => {
      const p = new PlaygroundPage(page);
      await p.open();
      await p.signIn();
      await p.operation().selectOption({ label: "Generate object" });
      await p.workflow().selectOption("extract-invoice");
      await p.input().fill("Compare me");
      // The fake upstream names the chair "text"; the local engine's tiny model writes its own.
      await p.typeSchema(JSON.stringify({ type: "object", properties: { name: { type: "string", minLength: 1, maxLength: 12 }, legs: { type: "integer", minimum: 3, maximum: 4 } }, required: ["name", "legs"] }));
      await page.getByLabel("Compare with").selectOption("on-device");
      await p.run();
      const comparison = page.getByRole("region", { name: "Comparison" });
      await expect(page.getByRole("region", { name: "Result A" }).getByRole("heading", { level: 2 })).toContainText("extract-invoice · fake-7b-served (fast)");
      await expect(page.getByRole("region", { name: "Result A" }).locator('[data-path="/name"][data-mark="changed"]')).toHaveCount(1, { timeout: 30_000 });
      // On a phone the columns are tabs: B's (with its comparison) is picked.
      await p.showVariant("B");
      // extract-invoice runs on a priced model, on-device on a free local one.
      await expect(comparison.getByTestId("delta-cost")).toHaveText(/^-\$0\.0+\d+$/, { timeout: 30_000 });
      await expect(comparison.getByTestId("delta-latency")).toHaveText(/^[+\-±]/);
      await expect(comparison).toContainText(/\d fields? differ/);
      await expect(page.getByRole("region", { name: "Result B" }).getByRole("heading", { level: 2 })).toContainText("on-device · genserve-tiny-test (tiny)");
      await expect(page.getByRole("region", { name: "Run metadata B" }).getByTestId("meta-model")).toHaveText("genserve-tiny-test (tiny)");
      // The name differs: marked in both outputs.
      await expect(page.getByRole("region", { name: "Result B" }).locator('[data-path="/name"][data-mark="changed"]')).toHaveCount(1);
      await comparison.getByRole("button", { name: "List them" }).click();
      await expect(comparison.getByRole("cell", { name: "/name", exact: true })).toBeVisible();
      await expectNoSidewaysScroll(page);
      await expectAccessible(page);
      await page.screenshot({ path: `${SHOTS}/state-${size.name}-compare.png` });
    });
  });
}

test("the favicon loads; every page passes axe in the dark theme and fits a phone's width", async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  const p = new PlaygroundPage(page);
  await p.open();
  const icon = await page.locator('link[rel="icon"]').first().getAttribute("href");
  expect(icon).toBeTruthy();
  const response = await page.request.get(new URL(icon!, BASE()).toString());
  expect(response.status()).toBe(200);
  expect(response.headers()["content-type"]).toContain("image/svg+xml");
  await p.signIn();
  await page.getByRole("button", { name: "Dark theme" }).click();
  for (const [link, heading] of [
    ["Runs", "Runs"],
    ["Suites", "Suites"],
    ["Workflows", "Workflows"],
    ["Contexts", "Contexts"],
    ["Usage", "Usage"],
    ["Keys", /This key/],
    ["API reference", "genserve API"],
  ] as const) {
    await page.getByRole("link", { name: link, exact: true }).click();
    await expect(page.getByRole("heading", { name: heading }).first()).toBeVisible();
    await expectNoSidewaysScroll(page);
    await expectAccessible(page);
  }
});
