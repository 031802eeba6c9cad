import { expect, test } from "@playwright/test";
import { BASE, expectAccessible, KEY, PlaygroundPage } from "./pages";

/**
 * Signing in with the key form (issue 34): the key is exchanged for an HttpOnly session cookie, so
 * nothing of it is left in the browser's storage; a reload stays signed in; Sign out ends it.
 */
test("signs in with the key form to a session: no key in the browser's storage, kept across a reload, ended by Sign out", async ({ page, context }) => {
  const p = new PlaygroundPage(page);
  await p.open();
  await expect(page.getByRole("heading", { name: "Sign in" })).toBeVisible();
  await expect(page.getByLabel("Email")).toBeVisible();
  await expectAccessible(page);
  await p.signIn();
  await expect(p.operation()).toBeVisible();
  await expect(page.getByRole("navigation", { name: "Main" }).getByText("key admin")).toBeVisible();

  const storage = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }));
  expect(storage).not.toContain(KEY());
  expect(storage).not.toMatch(/gs_[A-Za-z0-9_-]{20,}/);
  const cookies = await context.cookies(BASE());
  const session = cookies.find((c) => c.name === "genserve_session");
  expect(session).toMatchObject({ httpOnly: true, sameSite: "Lax", path: "/" });
  expect(cookies.some((c) => c.value.includes(KEY()))).toBe(false);
  // No script can read the cookie.
  expect(await page.evaluate(() => document.cookie)).not.toContain("genserve_session");

  await page.reload();
  await expect(p.operation()).toBeVisible();

  await page.getByRole("button", { name: "Sign out", exact: true }).click();
  await expect(page.getByLabel("API key")).toBeVisible();
  await page.reload();
  await expect(page.getByLabel("API key")).toBeVisible();
  // The old cookie, replayed, is refused.
  const replay = await fetch(`${BASE()}/api/v1/me`, { headers: { cookie: `genserve_session=${session!.value}` } });
  expect(replay.status).toBe(401);
});
