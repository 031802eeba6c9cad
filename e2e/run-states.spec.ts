import { expect, test } from "@playwright/test";
import { HOLD_MARKER, LONG_LIST_SCHEMA, longListMarker, PAUSE_MARKER } from "../test/helpers/fake-upstream";
import { BASE, expectAccessible, expectNoSidewaysScroll, KEY, PlaygroundPage, watchCspViolations } from "./pages";

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

/** A run as the server recorded it. */
async function runOnServer(id: string): Promise<{ status: string; error?: { code: string } }> {
  return (await (await fetch(`${BASE()}/api/v1/runs/${id}`, { headers: { "api-key": KEY() } })).json()) as { status: string; error?: { code: string } };
}

/** The id of the admin key's newest run. */
async function newestRunId(): Promise<string | undefined> {
  const page = (await (await fetch(`${BASE()}/api/v1/runs?limit=1`, { headers: { "api-key": KEY() } })).json()) as { runs: { id: string }[] };
  return page.runs[0]?.id;
}

test.describe("a run's states in the playground", () => {
  test("streams with a live status (time, first item, tokens), then offers Copy and Download", async ({ page }) => {
    const put = await fetch(`${BASE()}/api/v1/workflows/e2e-live-list`, {
      method: "PUT",
      headers: { "content-type": "application/json", "api-key": KEY() },
      body: JSON.stringify({ model: "fast", description: "A list streamed with pauses", retries: 0 }),
    });
    expect(put.ok, await put.text()).toBe(true);
    const p = new PlaygroundPage(page);
    await p.open();
    await p.signIn();
    await p.operation().selectOption({ label: "Stream object" });
    await p.workflow().selectOption("e2e-live-list");
    // The model pauses the list at a third and at two thirds until released: the live status is
    // checked while the stream surely is live, on a fast machine or a busy one.
    await p.input().fill(`Make the list. ${longListMarker(60)} ${PAUSE_MARKER}`);
    await p.typeSchema(JSON.stringify(LONG_LIST_SCHEMA));
    await p.run();
    const upstream = process.env.GENSERVE_E2E_UPSTREAM;
    const paused = () => expect.poll(async () => ((await (await fetch(`${upstream}/__paused`)).json()) as { paused: number }).paused, { timeout: 60_000 }).toBeGreaterThan(0);
    const release = () => fetch(`${upstream}/__release`, { method: "POST" });
    await paused();
    const status = p.result().getByTestId("run-status");
    await expect(status).toContainText(/Streaming (\d+ ms|\d+\.\d+ s)/);
    await expect(status).toContainText(/first item \d+ ms|first item \d+\.\d+ s/);
    await expect(status).toContainText(/~\d+ tok/);
    await release();
    await paused();
    await release();
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
    // The fake model stalls mid-object when asked to, so Cancel cannot race the end of the stream.
    await p.input().fill(`Invoice INV-9 ${HOLD_MARKER}`);
    await p.typeSchema(SLOW_SCHEMA);
    const started = page.waitForResponse((r) => r.url().includes("/api/v1/stream/object"));
    await p.run();
    await expect(p.result().getByTestId("result-object")).toContainText('"number"');
    const runId = (await started).headers()["x-run-id"]!;
    // Besides aborting the request, Cancel asks the server to stop the run wherever it executes.
    const cancelCall = page.waitForRequest((r) => r.method() === "POST" && r.url().endsWith(`/api/v1/runs/${runId}/cancel`));
    await page.getByRole("button", { name: "Cancel", exact: true }).click();
    await cancelCall;
    await expect(p.result().getByTestId("run-status")).toContainText(/^Cancelled at /);
    await expect(p.result().getByTestId("result-object")).toContainText('"number"');
    // Ended on the server too, not left running until the model gives up (issue 32).
    await expect.poll(async () => (await runOnServer(runId)).error?.code, { timeout: 10_000 }).toBe("cancelled");
    expect((await runOnServer(runId)).status).toBe("cancelled");
  });

  test("Esc cancels a generate run on the server, the model call aborted", async ({ page }) => {
    const p = new PlaygroundPage(page);
    await p.open();
    await p.signIn();
    await p.operation().selectOption({ label: "Generate object" });
    await p.workflow().selectOption("extract-invoice");
    await p.input().fill(`Invoice INV-10 ${HOLD_MARKER}`);
    await p.typeSchema(SLOW_SCHEMA);
    const before = await newestRunId();
    await p.run();
    await expect(p.result().getByTestId("run-status")).toContainText(/Running|Waiting|Generating/);
    // The run is stored (and its model called) before Esc.
    await expect.poll(newestRunId, { timeout: 15_000 }).not.toBe(before);
    const runId = (await newestRunId())!;
    await page.keyboard.press("Escape");
    await expect(p.result().getByTestId("run-status")).toContainText(/^Cancelled at /);
    await expect.poll(async () => (await runOnServer(runId)).error?.code, { timeout: 10_000 }).toBe("cancelled");
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

  test("offers the workflow's example in one click, and keeps Run off while the input is empty", async ({ page }) => {
    const example = {
      input: "Invoice INV-42: three lamps, 99.00 EUR",
      schema: { type: "object", properties: { number: { type: "string" }, total: { type: "number" } }, required: ["number", "total"] },
    };
    const put = await fetch(`${BASE()}/api/v1/workflows/e2e-example`, {
      method: "PUT",
      headers: { "content-type": "application/json", "api-key": KEY() },
      body: JSON.stringify({ model: "fast", description: "With an example", example }),
    });
    expect(put.status).toBeLessThan(300);
    const p = new PlaygroundPage(page);
    await p.open();
    await p.signIn();
    await p.operation().selectOption({ label: "Generate object" });
    await p.workflow().selectOption("e2e-example");
    // The schema follows the workflow while it is untouched: this one's example schema.
    await expect(p.schema().locator(".monaco-editor")).toContainText('"total"');
    await p.input().fill("");
    await expect(page.getByRole("button", { name: "Run", exact: true })).toBeDisabled();
    await expect(p.input()).toHaveAttribute("placeholder", `For example: ${example.input}`);
    await page.getByRole("button", { name: "Load example (input and schema)" }).click();
    await expect(p.input()).toHaveValue(example.input);
    await expect(p.schema().locator(".monaco-editor")).toContainText('"total"');
    await p.run();
    await expect(p.result().getByTestId("run-status")).toContainText(/^Done /);
    await expect(p.result().getByTestId("result-object")).toContainText('"total"');
    await expectAccessible(page);
    // An edited schema stays when the workflow changes.
    await p.typeSchema('{"type": "object", "properties": {"mine": {"type": "string"}}}');
    await p.workflow().selectOption("extract-invoice");
    await p.workflow().selectOption("e2e-example");
    await expect(p.schema().locator(".monaco-editor")).toContainText('"mine"');
  });

  test("does not scroll sideways at 390 px, even after a run with a long input (recent compositions)", async ({ page }) => {
    await page.setViewportSize({ width: 390, height: 844 });
    const p = new PlaygroundPage(page);
    await p.open();
    await p.signIn();
    await p.operation().selectOption({ label: "Generate text" });
    await p.input().fill(`A long input without spaces: ${"x".repeat(300)} and more words after it`);
    await p.run();
    await expect(p.result().getByTestId("run-status")).toContainText(/^Done /);
    await page.getByRole("tab", { name: "Compose" }).click();
    await expect(page.getByLabel("Recent compositions")).toBeVisible();
    await expectNoSidewaysScroll(page);
    await expectAccessible(page);
    await page.screenshot({ path: `${SHOTS}/playground-narrow-after-run.png`, fullPage: true });
  });

  test("signs new tabs in through the session cookie, and signs them all out on sign out", async ({ page, context }) => {
    const p = new PlaygroundPage(page);
    await p.open();
    await p.signIn();
    await expect(p.operation()).toBeVisible();
    const other = await context.newPage();
    await other.goto(`${BASE()}/runs`);
    await expect(other.getByRole("heading", { name: "Runs" })).toBeVisible();
    await other.getByRole("button", { name: "Sign out", exact: true }).click();
    const third = await context.newPage();
    await third.goto(`${BASE()}/runs`);
    await expect(third.getByLabel("API key")).toBeVisible();
  });
});
