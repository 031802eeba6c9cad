import { expect, test } from "@playwright/test";
import { BASE, expectAccessible, KEY, PlaygroundPage } from "./pages";

// "Retry download" on the compact model banner: the e2e server's `gone` model names a file that is
// not there, so a retry fails at once and the banner says so; keys that are not admins see no button.

async function userKey(): Promise<string> {
  const response = await fetch(`${BASE()}/api/v1/keys`, { method: "POST", headers: { "content-type": "application/json", "api-key": KEY() }, body: JSON.stringify({ name: `e2e-user-${Date.now()}` }) });
  expect(response.status).toBe(201);
  return ((await response.json()) as { key: string }).key;
}

async function openNoModel(page: import("@playwright/test").Page, key: string) {
  const p = new PlaygroundPage(page);
  await p.open();
  await p.signIn(key);
  await p.operation().selectOption({ label: "Generate text" });
  await p.workflow().selectOption("no-model");
  const banner = page.getByRole("alert").filter({ hasText: "is not available" });
  await expect(banner).toBeVisible();
  return banner;
}

test.describe("Retry download on the model banner", () => {
  for (const size of [
    { width: 1280, height: 720, dark: false },
    { width: 390, height: 844, dark: true },
  ]) {
    test(`an admin retries and sees the new failure (${size.width}×${size.height}${size.dark ? ", dark" : ""})`, async ({ page }) => {
      await page.setViewportSize(size);
      await page.emulateMedia({ colorScheme: size.dark ? "dark" : "light" });
      const banner = await openNoModel(page, KEY());
      const retry = banner.getByRole("button", { name: "Retry download" });
      await expect(retry).toBeVisible();
      // Still compact with the button (as the banner's own test measures it: typing in the input, both in view).
      await page.getByLabel("Input", { exact: true }).fill("Hello");
      expect((await banner.boundingBox())!.height).toBeLessThan(120);
      await expect(page.getByLabel("Input", { exact: true })).toBeInViewport();
      await retry.focus();
      await page.keyboard.press("Enter");
      const failed = banner.getByTestId("retry-failed");
      await expect(failed).toBeVisible();
      await expect(failed).toContainText("Retry failed:");
      await expect(failed).toContainText("no-such-model.gguf");
      // Run stays off, with the reason.
      await expect(page.getByRole("button", { name: "Run", exact: true })).toBeDisabled();
      await expect(retry).toBeEnabled();
      await expectAccessible(page);
      await page.screenshot({ path: `test-results/model-retry-${size.width}${size.dark ? "-dark" : ""}.png` });
    });
  }

  test("a key that is not an admin sees the banner without the button", async ({ page }) => {
    const banner = await openNoModel(page, await userKey());
    await expect(banner).toContainText("Model “gone” is not available");
    await expect(banner.getByRole("button", { name: "Retry download" })).toHaveCount(0);
    await expect(page.getByRole("button", { name: "Retry download" })).toHaveCount(0);
    await expectAccessible(page);
  });
});
