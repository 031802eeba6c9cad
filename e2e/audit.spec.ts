import { expect, test } from "@playwright/test";
import { BASE, expectAccessible, expectNoSidewaysScroll, KEY, PlaygroundPage, watchCspViolations } from "./pages";

const cspViolations = new WeakMap<object, string[]>();
test.beforeEach(({ page }) => void cspViolations.set(page, watchCspViolations(page)));
test.afterEach(({ page }) => expect(cspViolations.get(page) ?? []).toEqual([]));

async function api(method: string, path: string, body?: unknown) {
  const response = await fetch(`${BASE()}${path}`, { method, headers: { "api-key": KEY(), "user-agent": "e2e-audit", ...(body !== undefined && { "content-type": "application/json" }) }, ...(body !== undefined && { body: JSON.stringify(body) }) });
  return { status: response.status, json: response.status === 204 ? null : await response.json() };
}

test.describe("the audit log", () => {
  test("shows a key's creation and a label's move with who made them, filtered from the keyboard", async ({ page }) => {
    await page.setViewportSize({ width: 1280, height: 720 });
    const key = await api("POST", "/api/v1/keys", { name: "audited-e2e-key" });
    expect(key.status).toBe(201);
    expect((await api("PUT", "/api/v1/workflows/audit-e2e", { model: "free", instructions: "Be brief." })).status).toBe(201);
    expect((await api("PUT", "/api/v1/workflows/audit-e2e/labels/production", { version: "1" })).status).toBe(200);

    const p = new PlaygroundPage(page);
    await p.open();
    await p.signIn();
    await page.getByRole("link", { name: "Audit log", exact: true }).click();
    await expect(page.getByRole("heading", { name: "Audit log" })).toBeVisible();
    const table = page.getByRole("table");
    const created = table.getByRole("row").filter({ hasText: "key.create" }).filter({ hasText: key.json.id });
    await expect(created).toBeVisible();
    await expect(created).toContainText("admin");
    await expect(created).toContainText("e2e-audit");
    await expect(created).toContainText("audited-e2e-key");
    await expectAccessible(page);
    await expectNoSidewaysScroll(page);

    // Filter by action from the keyboard: the field, the prefix, Enter.
    await page.getByLabel("Action starts with").focus();
    await page.keyboard.type("workflow.label.");
    await page.keyboard.press("Enter");
    const moved = table.getByRole("row").filter({ hasText: "workflow.label.move" }).filter({ hasText: "audit-e2e" });
    await expect(moved).toBeVisible();
    await expect(moved).toContainText("labels.production");
    await expect(moved).toContainText("admin");
    await expect(table.getByRole("row").filter({ hasText: "key.create" })).toHaveCount(0);
  });

  test("fits a phone in the dark theme", async ({ page }) => {
    await page.setViewportSize({ width: 390, height: 844 });
    const p = new PlaygroundPage(page);
    await page.goto(`${BASE()}/audit`);
    await p.signIn();
    await page.getByRole("button", { name: "Dark theme" }).click();
    await expect(page.getByRole("table").getByRole("row").filter({ hasText: "key.create" }).first()).toBeAttached();
    await expectNoSidewaysScroll(page);
    await expectAccessible(page);
  });

  test("is not offered to keys that are not admin keys", async ({ page }) => {
    const user = await api("POST", "/api/v1/keys", { name: "audit-viewer" });
    const p = new PlaygroundPage(page);
    await page.goto(`${BASE()}/audit`);
    await p.signIn(user.json.key);
    await expect(page.getByText("Only admin keys may read the audit log.")).toBeVisible();
    await expect(page.getByRole("link", { name: "Audit log", exact: true })).toHaveCount(0);
  });
});
