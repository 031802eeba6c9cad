import { expect, test } from "@playwright/test";
import { BASE, expectAccessible, expectNoSidewaysScroll, KEY, PlaygroundPage } from "./pages";

/**
 * What a key's role allows, as the playground shows it: a viewer reads a workflow's saved prompt
 * but cannot change it or run it — Run is off and says why, as does the prompt; an editor edits the
 * prompt but moving the `production` label on save needs an admin key, and says so.
 */
const SCHEMA = { type: "object", properties: { vendor: { type: "string" } }, required: ["vendor"] };

async function admin(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${BASE()}${path}`, { method, headers: { "api-key": KEY(), "content-type": "application/json" }, ...(body !== undefined && { body: JSON.stringify(body) }) });
}

async function keyOf(role: "viewer" | "editor"): Promise<string> {
  const response = await admin("POST", "/api/v1/keys", { name: `e2e-${role}-${Date.now()}`, role });
  expect(response.status).toBe(201);
  return ((await response.json()) as { key: string }).key;
}

for (const size of [
  { width: 1280, height: 720, scheme: "light" as const },
  { width: 390, height: 844, scheme: "dark" as const },
]) {
  test.describe(`roles at ${size.width}×${size.height}, ${size.scheme}`, () => {
    test.use({ viewport: { width: size.width, height: size.height }, colorScheme: size.scheme });

    test("a viewer sees Run disabled with its reason, and the saved prompt read-only with its reason", async ({ page }) => {
      const slug = `e2e-viewer-${size.width}`;
      expect((await admin("PUT", `/api/v1/workflows/${slug}`, { model: "fast", instructions: "VIEWER SAVED INSTRUCTIONS", temperature: 0.4, schema: SCHEMA })).status).toBeLessThan(300);
      const p = new PlaygroundPage(page);
      await p.open();
      await p.signIn(await keyOf("viewer"));
      await p.operation().selectOption({ label: "Generate object" });
      await p.workflow().selectOption(slug);
      await p.input().fill("Invoice from Lampworks");

      const run = page.getByRole("button", { name: "Run", exact: true });
      await expect(run).toBeDisabled();
      const reason = page.locator("#run-blocked");
      await expect(reason).toHaveText("read-only: running a workflow needs an editor key (this key is a viewer)");
      await expect(reason).toBeVisible();
      await expect(run).toHaveAttribute("aria-describedby", "run-blocked");

      const prompt = page.getByRole("region", { name: "Prompt" });
      await prompt.scrollIntoViewIfNeeded();
      await expect(prompt.getByText("read-only: editing a workflow needs an editor key (this key is a viewer)")).toBeInViewport();
      await expect(prompt.getByTestId("instructions-editor")).toContainText("VIEWER SAVED INSTRUCTIONS");
      await expect(prompt.getByLabel("Temperature")).not.toBeEditable();
      await expect(prompt.getByLabel("Model")).toBeDisabled();
      await prompt.getByTestId("instructions-editor").locator(".monaco-editor").first().click();
      await page.keyboard.type("TYPED BY A VIEWER");
      await expect(prompt.getByTestId("instructions-editor")).not.toContainText("TYPED BY A VIEWER");
      await expect(prompt.getByRole("button", { name: "Save as version…" })).toHaveCount(0);

      await expectAccessible(page);
      await expectNoSidewaysScroll(page);
    });

    test("an editor edits the prompt and saves it, but moving production needs an admin key", async ({ page }) => {
      const slug = `e2e-editor-${size.width}`;
      expect((await admin("PUT", `/api/v1/workflows/${slug}`, { model: "fast", instructions: "EDITOR SAVED INSTRUCTIONS", schema: SCHEMA })).status).toBeLessThan(300);
      const p = new PlaygroundPage(page);
      await p.open();
      await p.signIn(await keyOf("editor"));
      await p.operation().selectOption({ label: "Generate object" });
      await p.workflow().selectOption(slug);
      await expect(page.locator("#run-blocked")).toHaveCount(0);

      const prompt = page.getByRole("region", { name: "Prompt" });
      await prompt.scrollIntoViewIfNeeded();
      await expect(prompt.getByText(/read-only:/)).toHaveCount(0);
      await prompt.getByLabel("Temperature").fill("0.7");
      await expect(prompt.getByText("edited", { exact: true })).toBeVisible();
      await prompt.getByRole("button", { name: "Save as version…" }).click();
      await prompt.getByLabel("What changed (the version's note)").fill("warmer");
      await prompt.getByLabel("Move a label to it (optional)").fill("production");
      await prompt.getByRole("button", { name: "Save as the next version" }).click();
      await expect(prompt.getByText("read-only: moving the production label needs an admin key (this key is an editor)")).toBeVisible();
      await prompt.getByLabel("Move a label to it (optional)").fill("staging");
      await prompt.getByRole("button", { name: "Save as the next version" }).click();
      await expect(prompt.getByRole("status")).toContainText("staging points at it");
    });
  });
}
