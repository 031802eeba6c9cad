import { expect, test } from "@playwright/test";
import { INVOICE_SCHEMA } from "../test/helpers/config";
import { BASE, expectAccessible, KEY, PlaygroundPage, watchCspViolations } from "./pages";

const SHOTS = "docs/screenshots";

const cspViolations = new WeakMap<object, string[]>();
test.beforeEach(({ page }) => void cspViolations.set(page, watchCspViolations(page)));
test.afterEach(({ page }) => expect(cspViolations.get(page) ?? []).toEqual([]));

async function api(method: string, path: string, body?: unknown) {
  const response = await fetch(`${BASE()}${path}`, { method, headers: { "api-key": KEY(), ...(body !== undefined && { "content-type": "application/json" }) }, ...(body !== undefined && { body: JSON.stringify(body) }) });
  return { status: response.status, headers: response.headers, json: response.status === 204 ? null : await response.json() };
}

test.describe("workflow lifecycle", () => {
  test("lists versions with labels, shows the diff with breaking changes marked, promotes and rolls back", async ({ page }) => {
    const schema = { type: "object", properties: { total: { type: "number" }, email: { type: "string" } }, required: ["total"] };
    expect((await api("PUT", "/api/v1/workflows/e2e-flow", { model: "free", instructions: "Extract the total.\nBe brief.", schema })).status).toBe(201);
    await api("PUT", "/api/v1/workflows/e2e-flow", { model: "free", instructions: "Extract the total.\nBe very brief.", schema: { ...schema, properties: { total: { type: "integer" } } } });

    const p = new PlaygroundPage(page);
    await page.goto(`${BASE()}/workflows/e2e-flow`);
    await p.signIn();
    await expect(page.getByRole("heading", { name: "e2e-flow" })).toBeVisible();
    const diff = page.getByTestId("workflow-diff");
    await expect(diff.getByText("Breaking for callers")).toBeVisible();
    const changes = diff.getByRole("list", { name: "Schema changes" });
    await expect(changes).toContainText('property "email" removed');
    await expect(changes).toContainText("type narrowed");
    await expect(diff.getByRole("group", { name: "Instructions diff" }).locator(".monaco-diff-editor")).toBeVisible();
    await expect(diff.getByRole("group", { name: "Schema diff" }).locator(".monaco-diff-editor")).toBeVisible();

    // Promote version 1, then 2; roll back to 1 in one click; the history says so.
    await page.getByLabel("Version", { exact: true }).selectOption("1");
    await page.getByRole("button", { name: "Promote", exact: true }).click();
    await expect(page.getByRole("status")).toContainText("production now points at version 1");
    await page.getByLabel("Version", { exact: true }).selectOption("2");
    await page.getByRole("button", { name: "Promote", exact: true }).click();
    await expect(page.getByText("production → 2").first()).toBeVisible();
    await page.getByRole("button", { name: "Roll production back to 1" }).click();
    await expect(page.getByRole("status")).toContainText("production now points at version 1");
    await expect(page.getByRole("table").last()).toContainText("2 → 1");
    await expectAccessible(page);
    await page.screenshot({ path: `${SHOTS}/workflow-versions.png`, fullPage: true });

    // "Try this version" opens the playground on slug@2.
    await page.getByRole("link", { name: "Try this version" }).last().click();
    await expect(page.getByLabel("Workflow")).toHaveValue("e2e-flow@2");
  });

  test("replays a run from its page, shares it with a field hidden, and the shared page shows it without a key", async ({ page, browser }) => {
    const made = await api("POST", "/api/v1/generate/object", { input: "Invoice SHARE-1", type: "event", callback: { url: "https://example.com/hooks", headers: { Authorization: "Bearer e2e-receiver-secret" } }, workflowSlug: "no-retry", schema: INVOICE_SCHEMA });
    expect(made.status).toBe(200);
    const runId = made.json.metadata.runId as string;
    const p = new PlaygroundPage(page);
    await page.goto(`${BASE()}/runs/${runId}`);
    await p.signIn();
    await page.getByRole("button", { name: /^Replay \(no-retry@config\)/ }).click();
    await expect(page.getByRole("status").filter({ hasText: "identical output" })).toBeVisible();
    await page.getByLabel("Hide fields (JSON Pointers)").fill("/number");
    await page.getByRole("button", { name: "Create share link" }).click();
    const url = await page.getByTestId("share-url").textContent();
    expect(url).toMatch(/\/s\/[A-Za-z0-9_-]{43}$/);
    // Shown once: in view, with a Copy button (issue 32, 4.6).
    await expect(page.getByTestId("share-url")).toBeInViewport();
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
    await page.getByRole("button", { name: "Copy link" }).click();
    await expect(page.getByRole("status").filter({ hasText: "Link copied" })).toBeVisible();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(url);
    await expectAccessible(page);

    // A stranger's browser: no key, no sign-in, the run with /number masked; nothing secret in the page or its requests.
    const stranger = await browser.newContext();
    const shared = await stranger.newPage();
    const bodies: string[] = [];
    shared.on("response", async (r) => void bodies.push(await r.text().catch(() => "")));
    await shared.goto(url!);
    await expect(shared.getByRole("heading", { name: /no-retry/ })).toBeVisible();
    await expect(shared.getByTestId("shared-output")).toContainText('"number": "[hidden]"');
    await expect(shared.getByRole("navigation", { name: "Main" })).toHaveCount(0);
    await expectAccessible(shared);
    await shared.screenshot({ path: `${SHOTS}/shared-run.png`, fullPage: true });
    const html = (await shared.content()) + bodies.join("\n");
    for (const secret of [KEY(), "e2e-receiver-secret", "example.com/hooks", runId]) expect(html).not.toContain(secret);

    // Revoked: the same link now says so.
    const id = (await api("GET", "/api/v1/shares")).json.shares[0].id as string;
    expect((await api("DELETE", `/api/v1/shares/${id}`)).status).toBe(204);
    await shared.reload();
    await expect(shared.getByRole("alert").filter({ hasText: "does not exist, has expired or was revoked" })).toBeVisible();
    await stranger.close();
  });

  test("replays a streamed run's output at its recorded pace on the shared page", async ({ browser }) => {
    const response = await fetch(`${BASE()}/api/v1/stream/object`, { method: "POST", headers: { "content-type": "application/json", "api-key": KEY() }, body: JSON.stringify({ input: "Invoice PACE-1", workflowSlug: "no-retry", schema: INVOICE_SCHEMA }) });
    const runId = response.headers.get("x-run-id")!;
    await response.text();
    await expect.poll(async () => (await api("GET", `/api/v1/runs/${runId}`)).json.status).toBe("succeeded");
    const link = (await api("POST", `/api/v1/runs/${runId}/share`, {})).json.url as string;
    const context = await browser.newContext();
    const shared = await context.newPage();
    await shared.goto(link);
    const output = shared.getByTestId("shared-output");
    await expect(output).toContainText('"currency"');
    // The link carries the recorded pace, and the button plays it: replaying, then the whole output again.
    expect((await (await fetch(`${BASE()}/api/v1/shared/${link.split("/s/")[1]}`)).json()).run.pace.length).toBeGreaterThan(0);
    await shared.getByRole("button", { name: "Replay the stream" }).click();
    await expect(shared.getByRole("button", { name: "Replaying…" })).toBeDisabled();
    await expect(shared.getByRole("button", { name: "Replay the stream" })).toBeEnabled({ timeout: 10_000 });
    await expect(output).toContainText('"currency"');
    await context.close();
  });
});
