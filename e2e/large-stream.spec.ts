import { expect, test } from "@playwright/test";
import { LONG_LIST_SCHEMA, longListMarker, PAUSE_MARKER } from "../test/helpers/fake-upstream";
import { BASE, KEY, PlaygroundPage } from "./pages";
import { countRenders, renderCounts, resetRenderCounts } from "./render-counter";

const ITEMS = 3_000;
const SCHEMA = LONG_LIST_SCHEMA;

test.beforeAll(async () => {
  // Room for the long stream on a busy machine (the test configuration's workflows have 60 s).
  const put = await fetch(`${BASE()}/api/v1/workflows/long-list`, {
    method: "PUT",
    headers: { "content-type": "application/json", "api-key": KEY() },
    body: JSON.stringify({ model: "fast", description: "A long list, streamed fast", timeoutMs: 600_000, retries: 0 }),
  });
  expect(put.ok, await put.text()).toBe(true);
});

/**
 * A long object streamed as fast as the server sends it (3,000 items, ~280 KB, ~35,000 deltas):
 * the page shows all of it, stays responsive, and its work per delta does not grow with the
 * document. Long tasks are read with a PerformanceObserver. On a machine shared with builds and
 * other suites a strict 200 ms bound fails for reasons that are not the page's (bench:page keeps
 * it); what is asserted here is what a view doing work in proportion to the whole document on
 * every delta cannot meet at this size: only the rows on screen in the DOM, typing landing while
 * it streams, and no long task over 3 s (the view that copied and re-rendered the whole value per
 * delta spent ~10 s in a single task at this size on an idle machine; this one's longest, with
 * the machine's load at 15 on 2 cores, was about 1 s, and since the output is drawn at transition
 * priority 151 and 215 ms at load 12 — around the 200 ms target, so not a bound a busy machine can
 * keep; bench:page reports it). The view is also checked after the stream: the end in view, the
 * beginning on scrolling back, a fold that still toggles (rows are kept by line), and the Fields
 * and Raw views of the same document. While it streams, only the output is drawn
 * again: the composition around it (its form, the Input) is not re-rendered by a delta, which is
 * what keeps a key press cheap (counted through React's developer-tools hook, see render-counter.ts).
 */
const upstream = () => process.env.GENSERVE_E2E_UPSTREAM!.replace(/\/v1$/, "");
/** Waits until the model's stream is paused (PAUSE_MARKER). */
const waitForPause = () => expect.poll(async () => ((await (await fetch(`${upstream()}/__paused`)).json()) as { paused: number }).paused, { timeout: 120_000 }).toBeGreaterThan(0);
const release = async () => expect(((await (await fetch(`${upstream()}/__release`, { method: "POST" })).json()) as { released: number }).released).toBe(1);

test("a long streamed object renders completely and the page stays responsive", async ({ page }) => {
  test.setTimeout(300_000);
  await page.addInitScript(() => {
    const w = window as unknown as { __long: number[] };
    w.__long = [];
    new PerformanceObserver((list) => list.getEntries().forEach((e) => w.__long.push(e.duration))).observe({ type: "longtask", buffered: true });
  });
  await countRenders(page, { composer: "form#composition", input: "textarea#input", output: '[role="log"][aria-label="Output"]' }, '[role="log"][aria-busy="true"]');
  const p = new PlaygroundPage(page);
  await p.open();
  await p.signIn();
  await p.operation().selectOption({ label: "Stream object" });
  await p.workflow().selectOption("long-list");
  const prompt = `Make the list. ${longListMarker(ITEMS)} ${PAUSE_MARKER}`;
  await p.input().fill(prompt);
  await p.typeSchema(JSON.stringify(SCHEMA));
  await page.waitForLoadState("networkidle");
  await page.evaluate(() => void ((window as unknown as { __long: number[] }).__long = []));
  const started = Date.now();
  await p.run();
  const output = p.result().getByTestId("result-object");
  // The model pauses at a third of the list, then at two thirds, each time until released: what
  // must hold while the stream is live is checked while it surely is, on a fast machine or a busy one.
  await waitForPause();
  // Items are drawn (which ones depends on how far the view has followed the stream: on a fast
  // machine the document's first lines are already above the view, and out of the DOM).
  await expect(output).toContainText('"title": "Item number ');
  // From one pause to the next, deltas re-render the output, and nothing of the composition: not its
  // form, not the Input.
  await resetRenderCounts(page);
  await release();
  await waitForPause();
  await expect.poll(async () => (await renderCounts(page)).output, { timeout: 60_000 }).toBeGreaterThanOrEqual(1);
  const renders = await renderCounts(page);
  expect(renders, "re-renders from one pause to the next (the output's: at least 1)").toMatchObject({ composer: 0, input: 0 });
  // Responsive while it streams: Cancel is there to press, and typing lands in the input.
  await expect(page.getByRole("button", { name: "Cancel", exact: true })).toBeEnabled();
  await p.input().press("End");
  await p.input().pressSequentially(" more");
  await expect(p.input()).toHaveValue(`${prompt} more`);
  await release();
  await expect(page.getByRole("status")).toHaveText("Complete", { timeout: 240_000 });
  const streamedMs = Date.now() - started;
  const long = await page.evaluate(() => (window as unknown as { __long: number[] }).__long);

  // Complete: the end of the document is in view (the view keeps to the end while it streams),
  // and scrolling to the top shows its beginning.
  await expect(output.locator(`[data-path="/items/${ITEMS - 1}/title"]`)).toHaveText(`"title": "Item number ${ITEMS - 1}",`, { useInnerText: true });
  await expect(output.locator(`[data-path="/items/${ITEMS - 1}/title"]`)).toBeInViewport();
  await expect(output.locator('[data-path="#end"]')).toBeInViewport();
  // Only what is on screen is in the DOM: some dozens of rows, not the document's ~30,000 lines.
  expect(await output.locator("[data-path]").count()).toBeLessThan(300);
  await output.evaluate((el) => el.scrollTo({ top: 0 }));
  await expect(output.locator('[data-path="/items"]')).toBeInViewport();
  await expect(output.locator('[data-path="/items/0/title"]')).toBeInViewport();
  // A row is drawn once and kept (by line) while it does not change: folding still redraws it, and its lines go.
  await output.getByRole("button", { name: "Fold /items/0", exact: true }).click();
  await expect(output.locator('[data-path="/items/0/title"]')).toHaveCount(0);
  await output.getByRole("button", { name: "Unfold /items/0", exact: true }).click();
  await expect(output.locator('[data-path="/items/0/title"]')).toBeInViewport();
  // The Fields view of the same document: drawn from its start, and to its end once scrolled there.
  await p.result().getByRole("tab", { name: "Fields" }).click();
  const fields = p.result().getByTestId("result-fields");
  await expect(fields.locator('[data-path="/items/0/title"]')).toContainText("done");
  await fields.evaluate((el) => el.scrollTo({ top: el.scrollHeight }));
  await expect(fields.locator(`[data-path="/items/${ITEMS - 1}/title"]`)).toBeInViewport();
  // The raw deltas as they came (the server joins the model's small ones: a few hundred events, drawn whole).
  await p.result().getByRole("tab", { name: "Raw deltas" }).click();
  const raw = p.result().getByRole("log");
  await expect(raw).toContainText('{"items":[{"id":0,');
  await expect(raw).toContainText(`"title":"Item number ${ITEMS - 1}"`);

  const max = Math.max(0, ...long);
  const total = long.reduce((a, b) => a + b, 0);
  test.info().annotations.push({ type: "long tasks", description: `${long.length}, total ${total.toFixed(0)} ms, max ${max.toFixed(0)} ms, over ${streamedMs} ms` });
  expect(max, `long tasks: ${long.map((d) => d.toFixed(0)).join(", ")}`).toBeLessThan(3_000);
});
