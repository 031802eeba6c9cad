import { expect, test } from "@playwright/test";
import { BASE, PlaygroundPage } from "./pages";
import { countRenders, renderCounts, resetRenderCounts } from "./render-counter";

/** What the fake model was last sent, as text. */
async function lastRequest(): Promise<string> {
  return JSON.stringify(await (await fetch(`${process.env.GENSERVE_E2E_UPSTREAM}/__last-request`)).json());
}

const TYPED = " and more";

/**
 * A key press in Input re-renders the Input and what follows from the input (the pre-flight
 * estimate), not the rest of the composition: not the composer's form, the bar (Run, Compare,
 * Code), the prompt section, the schema section or the result pane. Counted through React's
 * developer-tools hook (render-counter.ts), so the proof does not depend on the machine's load: the
 * composer that kept the whole composition in its own state re-rendered all of them on every key.
 * Run, ⌘↵, the permalink and the example button still see what was typed.
 */
test("typing in Input re-renders the Input, not the rest of the composition", async ({ page }) => {
  test.setTimeout(180_000);
  await countRenders(
    page,
    {
      input: "textarea#input",
      preflight: 'p[aria-label="Pre-flight"]',
      composer: "form#composition",
      toolbar: '[role="group"][aria-label="Run controls"]',
      prompt: "section#prompt-section",
      schema: "section#schema-section",
      result: '#pane-result p[role="status"]',
    },
    "form#composition",
  );
  const p = new PlaygroundPage(page);
  await p.open();
  await p.signIn();
  await p.operation().selectOption({ label: "Stream object" });
  await p.workflow().selectOption("extract-invoice");
  await p.input().fill("Invoice 7 from ACME, total 12.50");
  // Everything that loads is there (the prompt's and the schema's editors) and a run has ended, so
  // the result pane shows a result while typing.
  await expect(page.getByRole("region", { name: "Prompt" }).getByTestId("instructions-editor")).toContainText("You extract invoice fields", { timeout: 60_000 });
  await expect(p.schema().locator(".monaco-editor").first()).toBeVisible({ timeout: 60_000 });
  await p.run();
  await expect(page.getByRole("status").filter({ hasText: "Complete" })).toBeAttached({ timeout: 30_000 });
  await page.waitForLoadState("networkidle");

  await p.input().click();
  await p.input().press("End");
  await resetRenderCounts(page);
  await p.input().pressSequentially(TYPED);
  await expect(p.input()).toHaveValue(`Invoice 7 from ACME, total 12.50${TYPED}`);
  const renders = await renderCounts(page);
  test.info().annotations.push({ type: "re-renders", description: JSON.stringify(renders) });
  // One render of the Input per key (the estimate follows the input's length, deferred: at most as often).
  expect(renders.input, "the Input is re-rendered for each key").toBeGreaterThanOrEqual(TYPED.length);
  expect(renders.preflight).toBeLessThanOrEqual(renders.input!);
  expect(renders, `re-renders while typing ${TYPED.length} characters`).toMatchObject({ composer: 0, toolbar: 0, prompt: 0, schema: 0, result: 0 });
  await expect(page.getByLabel("Pre-flight")).toContainText(/about \d+ tokens/);

  // What runs is what was typed: ⌘↵ (from the Input) and Run.
  await p.input().press("ControlOrMeta+Enter");
  await expect.poll(lastRequest, { timeout: 30_000 }).toContain(`total 12.50${TYPED}`);
  await expect(page.getByRole("status").filter({ hasText: "Complete" })).toBeAttached({ timeout: 30_000 });
  await p.input().pressSequentially("!");
  await p.run();
  await expect.poll(lastRequest, { timeout: 30_000 }).toContain(`total 12.50${TYPED}!`);
  // The permalink carries the input as it is now.
  await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: BASE() });
  await p.input().pressSequentially("?");
  await p.copy("Copy permalink");
  const link = await page.evaluate(() => navigator.clipboard.readText());
  await page.goto("about:blank");
  await page.goto(link);
  await expect(p.input()).toHaveValue(`Invoice 7 from ACME, total 12.50${TYPED}!?`);
});
