import { expect, test } from "@playwright/test";
import { BASE, expectAccessible, KEY, PlaygroundPage, watchCspViolations } from "./pages";

const SHOTS = "docs/screenshots";

// Every test runs under the pages' strict CSP and fails on any violation the browser reports.
const cspViolations = new WeakMap<object, string[]>();
test.beforeEach(({ page }) => void cspViolations.set(page, watchCspViolations(page)));
test.afterEach(({ page }) => expect(cspViolations.get(page) ?? []).toEqual([]));

test.describe("playground", () => {
  test("refuses a wrong key with a clear message, then signs in", async ({ page }) => {
    const p = new PlaygroundPage(page);
    await p.open();
    await p.signIn("gs_" + "x".repeat(43));
    await expect(page.getByRole("alert").filter({ hasText: /./ })).toHaveText("That key is not valid or has been revoked.");
    await expectAccessible(page);
    await page.screenshot({ path: `${SHOTS}/sign-in.png` });
    await p.signIn();
    await expect(p.operation()).toBeVisible();
    // The key is kept in the session, never in the URL.
    expect(page.url()).not.toContain(KEY());
  });

  test("streams an object that fills in live, with metadata", async ({ page }) => {
    const p = new PlaygroundPage(page);
    await p.open();
    await p.signIn();
    await p.operation().selectOption({ label: "Stream object" });
    await p.workflow().selectOption("extract-invoice");
    await p.input().fill("Invoice INV-7, one chair, 120.50 EUR");
    await p.typeSchema(
      JSON.stringify({
        type: "object",
        properties: { number: { type: "string" }, total: { type: "number" }, note: { type: "string", enum: ["a long note that takes a while to stream in"] } },
        required: ["number", "total", "note"],
      }),
    );
    await p.run();
    const log = p.result().getByRole("log");
    await expect(log).toHaveAttribute("aria-busy", "true");
    // Partial state: the object is there before the stream is complete.
    await expect(p.result().getByTestId("result-object")).toContainText('"number"');
    await expect(p.result().getByText("Valid against schema")).toBeVisible();
    await expect(log).toHaveAttribute("aria-busy", "false");
    await expect(p.result().getByTestId("result-object")).toContainText('"note": "a long note that takes a while to stream in"');
    await expect(page.getByRole("status")).toHaveText("Complete");
    await expect(p.metadata().getByTestId("meta-model")).toHaveText("fake-7b-served (fast)");
    await expect(p.metadata().getByTestId("meta-run-id")).toContainText("run_");
    await page.getByRole("tab", { name: "Fields" }).click();
    await expect(p.result().getByText("done").first()).toBeVisible();
    await page.getByRole("tab", { name: "Raw deltas" }).click();
    await expect(p.result().getByRole("log")).toContainText('{"number":');
    await page.getByRole("tab", { name: "Object" }).click();
    await expectAccessible(page);
    await page.screenshot({ path: `${SHOTS}/playground-stream.png`, fullPage: true });
  });

  test("streams an object from the local engine, and names a local model that is missing", async ({ page }) => {
    const p = new PlaygroundPage(page);
    await p.open();
    await p.signIn();
    await p.operation().selectOption({ label: "Stream object" });
    await p.workflow().selectOption("on-device");
    await p.input().fill("Describe a chair");
    await p.typeSchema(
      JSON.stringify({
        type: "object",
        properties: { name: { type: "string", minLength: 3, maxLength: 12 }, legs: { type: "integer", minimum: 3, maximum: 4 }, when: { type: "string", format: "date" } },
        required: ["name", "legs", "when"],
      }),
    );
    await p.run();
    await expect(page.getByRole("status")).toHaveText("Complete", { timeout: 30_000 });
    await expect(p.result().getByText("Valid against schema")).toBeVisible();
    await expect(p.metadata().getByTestId("meta-model")).toHaveText("genserve-tiny-test (tiny)");
    await expect(p.result().getByTestId("result-object")).toContainText('"legs"');
    await page.screenshot({ path: `${SHOTS}/playground-local.png`, fullPage: true });

    await p.workflow().selectOption("no-model");
    const banner = page.getByRole("alert").filter({ hasText: "is not available" });
    await expect(banner).toContainText("no-such-model.gguf");
    await expect(banner).toContainText("--model");
    await expectAccessible(page);
  });

  test("generates text and an object with an attachment", async ({ page }) => {
    const p = new PlaygroundPage(page);
    await p.open();
    await p.signIn();
    await p.operation().selectOption({ label: "Generate text" });
    await p.openAdvanced();
    await expect(page.getByLabel("Callback URL")).toHaveValue(new RegExp(`^${BASE()}/api/v1/inbox/inb_`));
    await p.input().fill("Say hello");
    await page.keyboard.press("ControlOrMeta+Enter");
    await expect(p.result()).toContainText("echo: Say hello");
    await expect(p.metadata().getByTestId("meta-input-tokens")).toHaveText("11");
    // The callback event reaches the built-in inbox and shows up, signature checked.
    const callback = page.getByRole("region", { name: "Callback" });
    await expect(callback.getByText("Signature verified")).toBeVisible();
    await expect(callback).toContainText('"type": "run.succeeded"');
    await page.screenshot({ path: `${SHOTS}/playground-callback.png`, fullPage: true });

    await p.operation().selectOption({ label: "Generate object" });
    await page.getByLabel("Attach files").setInputFiles({ name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("Paid in full.") });
    await expect(page.getByRole("list", { name: "Attached files" })).toContainText("notes.txt · text/plain · 13 B");
    await p.run();
    await expect(p.result().getByText("Valid against schema")).toBeVisible();
    const runId = (await p.metadata().getByTestId("meta-run-id").locator("a").textContent())!;
    const run = await (await fetch(`${BASE()}/api/v1/runs/${runId}`, { headers: { "Api-Key": KEY() } })).json();
    expect(run.attachments[0]).toMatchObject({ mimeType: "text/plain", bytes: 13 });
  });

  test("marks schema errors in the editor: the service's rules and the API's answer", async ({ page }) => {
    const p = new PlaygroundPage(page);
    await p.open();
    await p.signIn();
    await p.operation().selectOption({ label: "Generate object" });
    await p.input().fill("x");
    await p.typeSchema('{"type": "object", "properties": {"code": {"type": "string", "pattern": "a**"}}}');
    const problems = page.getByRole("list", { name: "Schema problems" });
    await expect(problems).toContainText("/properties/code/pattern: is not a valid regular expression");
    await p.run();
    await expect(problems.locator("li").first()).toHaveClass(/text-red/);
    await expect(p.schema().locator(".squiggly-error").first()).toBeAttached();
    await page.screenshot({ path: `${SHOTS}/playground-schema-error.png`, fullPage: true });
  });

  test("says before Run how the workflow's model holds the output to the schema", async ({ page }) => {
    const p = new PlaygroundPage(page);
    await p.open();
    await p.signIn();
    await p.operation().selectOption({ label: "Generate object" });
    await p.workflow().selectOption("on-device");
    const support = page.getByLabel("How the model holds the output to this schema");
    await p.typeSchema(JSON.stringify({ type: "object", properties: { legs: { type: "integer", minimum: 3, maximum: 4 } }, required: ["legs"] }));
    await expect(support).toContainText("Every keyword is enforced while “tiny” generates");
    await p.typeSchema(JSON.stringify({ type: "object", properties: { tags: { type: "array", items: { type: "string" }, uniqueItems: true } }, required: ["tags"] }));
    await expect(support).toContainText("checked after generation");
    await expect(support).toContainText("uniqueItems at /properties/tags");
    await support.screenshot({ path: `${SHOTS}/playground-schema-support.png` });
    await p.workflow().selectOption("extract-invoice");
    await expect(support).toContainText("genserve validates every output");
    await p.typeSchema(JSON.stringify({ $schema: "https://json-schema.org/draft/2020-12/schema", type: "object", id: "x" }));
    await expect(support).toContainText('uses draft-04\'s "id"');
    await expectAccessible(page);
  });

  test("copies the request as curl", async ({ page, context }) => {
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: BASE() });
    const p = new PlaygroundPage(page);
    await p.open();
    await p.signIn();
    await p.input().fill("Invoice 9");
    await p.copy("Copy as curl");
    const curl = await page.evaluate(() => navigator.clipboard.readText());
    expect(curl).toContain(`curl -N '${BASE()}/api/v1/stream/object'`);
    expect(curl).toContain('"input":"Invoice 9"');
    expect(curl).not.toContain(KEY());
  });

  test("restores a composition from a permalink", async ({ page, context }) => {
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: BASE() });
    const p = new PlaygroundPage(page);
    await p.open();
    await p.signIn();
    await p.operation().selectOption({ label: "Generate text" });
    await p.input().fill("Remember me");
    await p.copy("Copy permalink");
    const link = await page.evaluate(() => navigator.clipboard.readText());
    expect(link).not.toContain(KEY());
    await page.goto("about:blank");
    await page.goto(link);
    await expect(p.input()).toHaveValue("Remember me");
    await expect(p.operation()).toHaveValue("generate-text");
  });

  test("loads what a crafted permalink holds of the right types and names each field it could not use", async ({ page }) => {
    const crafted = { operation: "generate-text", input: ["not", "text"], contextSlugs: "a,b", attachments: [{ file: 7 }], workflowSlug: "extract-invoice" };
    const hash = `#c=${Buffer.from(JSON.stringify(crafted)).toString("base64url")}`;
    const p = new PlaygroundPage(page);
    await p.open(hash);
    await p.signIn();
    const notice = page.getByRole("status", { name: "Permalink problems" });
    await expect(notice).toBeVisible();
    await expect(notice).toContainText("This link could not be loaded in full.");
    for (const field of ["input", "contextSlugs", "attachments"]) await expect(notice.getByRole("listitem").filter({ hasText: new RegExp(`^${field}[:/]`) })).toBeVisible();
    // The fields of the right types are loaded, and the page works.
    await expect(p.operation()).toHaveValue("generate-text");
    await expect(p.workflow()).toHaveValue("extract-invoice");
    await expect(page.getByText("Something went wrong")).toHaveCount(0);
    await expectAccessible(page);
    await notice.getByRole("button", { name: "Dismiss" }).click();
    await expect(notice).toHaveCount(0);
  });
});

test.describe("threads", () => {
  test("starts a thread and continues it", async ({ page }) => {
    const p = new PlaygroundPage(page);
    await p.open();
    await p.signIn();
    await p.operation().selectOption({ label: "Stream object" });
    await p.openAdvanced();
    await page.getByRole("button", { name: "New thread" }).click();
    const threadId = await page.getByLabel("Thread id (optional)").inputValue();
    expect(threadId).toMatch(/^t-/);
    await p.input().fill("First message");
    await p.run();
    await expect(p.result().getByText("Valid against schema")).toBeVisible();
    // The thread's turns so far are shown above the input.
    const transcript = page.getByRole("region", { name: "Thread so far" });
    await expect(transcript).toContainText("2 turns so far");
    await expect(transcript).toContainText("First message");
    await p.input().fill("Second message");
    await p.run();
    await expect(page.getByRole("status")).toHaveText("Complete");
    await expect(transcript).toContainText("4 turns so far");
    await expect(async () => {
      const thread = await (await fetch(`${BASE()}/api/v1/threads/${threadId}`, { headers: { "Api-Key": KEY() } })).json();
      expect(thread.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    }).toPass();
  });
});

test.describe("runs and catalog pages", () => {
  test("lists runs newest first and opens one", async ({ page }) => {
    const p = new PlaygroundPage(page);
    await p.open();
    await p.signIn();
    await p.operation().selectOption({ label: "Generate text" });
    await p.input().fill("A run to find");
    await p.run();
    await expect(p.result()).toContainText("echo: A run to find");
    await page.getByRole("link", { name: "Runs" }).click();
    await expect(page.getByRole("heading", { name: "Runs" })).toBeVisible();
    await expectAccessible(page);
    await page.screenshot({ path: `${SHOTS}/runs.png` });
    await page.getByRole("row").nth(1).getByRole("link").click();
    await expect(page.getByText("A run to find", { exact: true })).toBeVisible();
    await expectAccessible(page);
    await page.screenshot({ path: `${SHOTS}/run-detail.png`, fullPage: true });
    await page.getByRole("link", { name: "Open in playground" }).click();
    // The run page has an "Input" panel too: wait until the playground has replaced it.
    await page.waitForURL((url) => url.pathname === "/");
    await expect(p.input()).toHaveValue("A run to find");
  });

  test("browses workflows, contexts and the API reference", async ({ page }) => {
    const p = new PlaygroundPage(page);
    await p.open();
    await p.signIn();
    await page.getByRole("link", { name: "Workflows" }).click();
    await expect(page.getByRole("cell", { name: "extract-invoice" })).toBeVisible();
    await expectAccessible(page);
    await page.getByRole("link", { name: "Contexts" }).click();
    await expect(page.getByRole("cell", { name: "invoice-rules" })).toBeVisible();
    await expectAccessible(page);
    await page.getByRole("link", { name: "API reference" }).click();
    await expect(page.getByRole("heading", { name: "genserve API" })).toBeVisible();
    await expectAccessible(page);
  });

  test("admin keys create and edit contexts and workflows", async ({ page }) => {
    const p = new PlaygroundPage(page);
    await p.open();
    await p.signIn();
    await page.getByRole("link", { name: "Contexts" }).click();
    await page.getByRole("button", { name: "New context" }).click();
    await page.getByLabel("Slug").fill("e2e-faq");
    await page.getByLabel("Title").fill("E2E FAQ");
    await page.getByLabel("Content").fill("Returns within 30 days.");
    await page.getByRole("button", { name: "Save" }).click();
    const row = page.getByRole("row", { name: /e2e-faq/ });
    await expect(row).toContainText("1");
    await row.getByRole("button", { name: "Edit e2e-faq" }).click();
    await page.getByLabel("Content").fill("Returns within 60 days.");
    await page.getByRole("button", { name: "Save" }).click();
    await expect(row.getByRole("cell").nth(3)).toHaveText("2");
    await expect(page.getByRole("row", { name: /invoice-rules/ })).toContainText("from genserve.yaml");
    await expectAccessible(page);

    await page.getByRole("link", { name: "Workflows" }).click();
    await page.getByRole("button", { name: "New workflow" }).click();
    await page.getByLabel("Slug").fill("e2e-flow");
    await page.getByLabel(/Workflow \(JSON/).fill(JSON.stringify({ model: "nope" }));
    await page.getByRole("button", { name: "Save" }).click();
    await expect(page.getByRole("alert").filter({ hasText: /unknown model alias/ })).toBeVisible();
    await page.getByLabel(/Workflow \(JSON/).fill(JSON.stringify({ model: "free", contexts: ["e2e-faq"] }));
    await page.getByRole("button", { name: "Save" }).click();
    await expect(page.getByRole("row", { name: /e2e-flow/ })).toBeVisible();
    await expectAccessible(page);
    await page.screenshot({ path: `${SHOTS}/workflows-admin.png` });
  });

  test("admin keys create keys with limits, edit and revoke them; usage charts runs and cost", async ({ page }) => {
    const p = new PlaygroundPage(page);
    await p.open();
    await p.signIn();
    await page.getByRole("link", { name: "Keys" }).click();
    await expect(page.getByRole("heading", { name: /This key/ })).toBeVisible();
    await page.getByRole("button", { name: "New key" }).click();
    await page.getByLabel("Name").fill("e2e-team");
    await page.getByLabel("Runs per minute").fill("lots");
    await page.getByRole("button", { name: "Create key" }).click();
    // The API's own message, under the field it names.
    await expect(page.getByText("must be a whole number of runs per minute")).toBeVisible();
    await expect(page.getByLabel("Runs per minute")).toHaveAttribute("aria-invalid", "true");
    await page.getByLabel("Runs per minute").fill("60");
    await page.getByLabel("Daily budget (USD)").fill("5");
    await page.getByLabel("Workflows").fill("no-retry, extract-invoice");
    await page.getByRole("button", { name: "Create key" }).click();
    await expect(page.getByTestId("created-key")).toHaveText(/^gs_/);
    await expectAccessible(page);
    await page.getByRole("button", { name: "Done" }).click();
    const row = page.getByRole("row", { name: /e2e-team/ });
    await expect(row).toContainText("rpm 60, $5/day, workflows no-retry,extract-invoice");
    await row.getByRole("button", { name: "Edit e2e-team" }).click();
    await page.getByLabel("Tokens per minute").fill("20000");
    await page.getByLabel("Runs per minute").fill("");
    await page.getByRole("button", { name: "Save" }).click();
    await expect(row).toContainText("tpm 20000, $5/day");
    await expect(row).not.toContainText("rpm");
    page.once("dialog", (dialog) => void dialog.accept());
    await row.getByRole("button", { name: "Revoke e2e-team" }).click();
    await expect(row).toContainText("revoked");
    await expectAccessible(page);
    await page.screenshot({ path: `${SHOTS}/keys.png`, fullPage: true });

    // A run to report on, made as a program would.
    const made = await page.request.post(`${BASE()}/api/v1/generate/text`, {
      headers: { "api-key": KEY() },
      data: { input: "usage", type: "event", workflowSlug: "extract-invoice", callback: { url: "https://example.com/hook" } },
    });
    expect(made.status()).toBe(200);
    await page.getByRole("link", { name: "Usage" }).click();
    await expect(page.getByRole("heading", { name: "Usage" })).toBeVisible();
    await expect(page.getByTestId("usage-total-runs")).not.toHaveText("0");
    await expect(page.getByRole("img", { name: /Runs and cost per day/ })).toBeVisible();
    await expect(page.locator(".recharts-bar-rectangle").first()).toBeVisible();
    await expect(page.getByRole("row", { name: /extract-invoice/ })).toBeVisible();
    await page.getByLabel("Group by").selectOption("key");
    await expect(page.getByRole("columnheader", { name: "Key" })).toBeVisible();
    await page.getByLabel("Period").selectOption("24h");
    await expect(page.getByRole("img", { name: /Runs and cost per hour/ })).toBeVisible();
    await expectAccessible(page);
    await page.screenshot({ path: `${SHOTS}/usage.png`, fullPage: true });
  });

  test("works in a narrow window and in the dark theme", async ({ page }) => {
    await page.setViewportSize({ width: 420, height: 900 });
    const p = new PlaygroundPage(page);
    await p.open();
    await p.signIn();
    await page.getByRole("button", { name: "Dark theme" }).click();
    await expect(page.locator("html")).toHaveClass(/dark/);
    await expect(p.input()).toBeVisible();
    await expectAccessible(page);
    await page.screenshot({ path: `${SHOTS}/playground-narrow-dark.png`, fullPage: true });
  });
});
