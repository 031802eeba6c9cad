import { expect, test } from "@playwright/test";
import { BASE, expectAccessible, expectNoSidewaysScroll, KEY, PlaygroundPage, watchCspViolations } from "./pages";

/**
 * Members (issue 34): an admin invites a person from the Members page (the one-time link shown and
 * copied), the person joins from it; a person in two projects switches between them in the nav and
 * sees each project's workflows only.
 */

const cspViolations = new WeakMap<object, string[]>();
test.beforeEach(({ page }) => void cspViolations.set(page, watchCspViolations(page)));
test.afterEach(({ page }) => expect(cspViolations.get(page) ?? []).toEqual([]));

async function api(key: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${BASE()}${path}`, { method, headers: { "api-key": key, ...(body !== undefined && { "content-type": "application/json" }) }, ...(body !== undefined && { body: JSON.stringify(body) }) });
  return { status: response.status, json: response.status === 204 ? null : await response.json() };
}

test("an admin invites a member: the link is shown and copied, and the person joins from it", async ({ page, context, browser }) => {
  await page.setViewportSize({ width: 1280, height: 720 });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: BASE() });
  const p = new PlaygroundPage(page);
  await p.open();
  await p.signIn();
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Members", exact: true }).click();
  await expect(page.getByRole("heading", { name: "Members of Default" })).toBeVisible();
  await page.getByLabel("Email").fill("invited-e2e@example.com");
  await page.getByLabel("Role", { exact: true }).selectOption("editor");
  await page.getByRole("button", { name: "Invite", exact: true }).click();
  const link = page.getByLabel("Invitation link");
  await expect(link).toHaveValue(/\/auth\/invite\/[A-Za-z0-9_-]{43}$/);
  const url = await link.inputValue();
  await page.getByRole("button", { name: "Copy", exact: true }).click();
  await expect(page.getByRole("button", { name: "Copied", exact: true })).toBeVisible();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(url);
  await expect(page.getByText("invited-e2e@example.com as editor")).toBeVisible();
  await expectAccessible(page);
  await expectNoSidewaysScroll(page);
  await page.getByRole("button", { name: "Dark theme" }).click();
  await expectAccessible(page);

  // The invited person, in their own browser.
  const other = await browser.newContext();
  const invited = await other.newPage();
  await invited.goto(`${BASE()}${new URL(url).pathname}`);
  await expect(invited.getByRole("heading", { name: "Join Default as editor" })).toBeVisible();
  await invited.getByRole("button", { name: "Join Default" }).click();
  await expect(invited.getByRole("navigation", { name: "Main" }).getByText("invited-e2e@example.com")).toBeVisible();
  await other.close();

  // The admin's list shows them (on a phone too).
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  const members = page.getByRole("table", { name: "Members" });
  await expect(members.getByRole("row").filter({ hasText: "invited-e2e@example.com" })).toBeVisible();
  await expect(page.getByLabel("Role of invited-e2e@example.com")).toHaveValue("editor");
  await expectNoSidewaysScroll(page);
});

test("a person in two projects switches project in the nav and sees that project's workflows only", async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 720 });
  expect((await api(KEY(), "POST", "/api/v1/projects", { slug: "e2e-beta", name: "Beta" })).status).toBe(201);
  const betaAdmin = await api(KEY(), "POST", "/api/v1/keys", { name: "e2e-beta-admin", role: "admin", project: "e2e-beta" });
  expect(betaAdmin.status).toBe(201);
  expect((await api(betaAdmin.json.key, "PUT", "/api/v1/workflows/beta-only-flow", { model: "free", instructions: "Beta's." })).status).toBe(201);
  const toDefault = await api(KEY(), "POST", "/api/v1/members/invites", { email: "switcher-e2e@example.com", role: "viewer" });
  const toBeta = await api(betaAdmin.json.key, "POST", "/api/v1/members/invites", { email: "switcher-e2e@example.com", role: "editor" });

  // Joins Default (a new person, signed in), then Beta (the same session moves there).
  for (const [invite, name] of [[toDefault, "Default"], [toBeta, "Beta"]] as const) {
    await page.goto(`${BASE()}${new URL(invite.json.url).pathname}`);
    await page.getByRole("button", { name: `Join ${name}` }).click();
    await expect(page.getByRole("navigation", { name: "Main" }).getByText("switcher-e2e@example.com")).toBeVisible();
  }
  const switcher = page.getByLabel("Project", { exact: true });
  await expect(switcher).toHaveValue("e2e-beta");
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Workflows", exact: true }).click();
  const table = page.getByRole("table");
  await expect(table.getByRole("link", { name: "beta-only-flow" })).toBeVisible();
  await expect(table.getByRole("link", { name: "no-retry", exact: true })).toHaveCount(0);

  await switcher.selectOption("default");
  await expect(table.getByRole("link", { name: "no-retry", exact: true })).toBeVisible();
  await expect(table.getByRole("link", { name: "beta-only-flow" })).toHaveCount(0);
  await expectAccessible(page);
  // Dark theme, and a phone: the switcher still named and usable, nothing scrolls sideways.
  await page.getByRole("button", { name: "Dark theme" }).click();
  await expectAccessible(page);
  await page.setViewportSize({ width: 390, height: 844 });
  await expect(switcher).toBeVisible();
  await expectNoSidewaysScroll(page);

  // From the keyboard, back to Beta.
  await switcher.focus();
  await page.keyboard.press("ArrowUp");
  await expect(switcher).toHaveValue("e2e-beta");
  await expect(table.getByRole("link", { name: "beta-only-flow" })).toBeVisible();
});
