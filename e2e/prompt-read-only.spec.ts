import { expect, test } from "@playwright/test";
import { BASE, expectAccessible, expectNoSidewaysScroll, KEY, PlaygroundPage } from "./pages";

/**
 * A key that may not edit workflows (today: any key that is not an admin) sees the prompt
 * read-only (issue 32): the saved instructions and parameters are shown, nothing can be changed, no
 * "Save as version…", and Run runs the saved version as it is (the model receives the saved
 * instructions).
 */
const SCHEMA = { type: "object", properties: { vendor: { type: "string" } }, required: ["vendor"] };

async function admin(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${BASE()}${path}`, { method, headers: { "api-key": KEY(), "content-type": "application/json" }, ...(body !== undefined && { body: JSON.stringify(body) }) });
}

async function userKey(): Promise<string> {
  const response = await admin("POST", "/api/v1/keys", { name: `e2e-reader-${Date.now()}` });
  expect(response.status).toBe(201);
  return ((await response.json()) as { key: string }).key;
}

async function lastSystemPrompt(): Promise<string> {
  const body = (await (await fetch(`${process.env.GENSERVE_E2E_UPSTREAM}/__last-request`)).json()) as { messages: { role: string; content: unknown }[] };
  return String(body.messages.find((m) => m.role === "system")?.content ?? "");
}

for (const size of [
  { width: 1280, height: 720, scheme: "light" as const },
  { width: 390, height: 844, scheme: "dark" as const },
]) {
  test.describe(`read-only prompt at ${size.width}×${size.height}, ${size.scheme}`, () => {
    test.use({ viewport: { width: size.width, height: size.height }, colorScheme: size.scheme });

    test("a non-admin key sees the saved prompt, cannot change it, and runs the saved version", async ({ page }) => {
      const slug = `e2e-readonly-${size.width}`;
      expect((await admin("PUT", `/api/v1/workflows/${slug}`, { model: "fast", instructions: "READ-ONLY SAVED INSTRUCTIONS", temperature: 0.4, schema: SCHEMA })).status).toBeLessThan(300);
      const p = new PlaygroundPage(page);
      await p.open();
      await p.signIn(await userKey());
      await p.operation().selectOption({ label: "Generate object" });
      await p.workflow().selectOption(slug);

      const prompt = page.getByRole("region", { name: "Prompt" });
      await prompt.scrollIntoViewIfNeeded();
      await expect(prompt.getByText("read-only: editing a workflow needs an admin key")).toBeInViewport();
      await expect(prompt.getByTestId("instructions-editor")).toContainText("READ-ONLY SAVED INSTRUCTIONS");
      const temperature = prompt.getByLabel("Temperature");
      await expect(temperature).toHaveValue("0.4");
      await expect(temperature).not.toBeEditable();
      await expect(prompt.getByLabel("Model")).toBeDisabled();

      // Typing into the instructions changes nothing: the editor is read-only.
      await prompt.getByTestId("instructions-editor").locator(".monaco-editor").first().click();
      await page.keyboard.type("TYPED BY A READER");
      await expect(prompt.getByTestId("instructions-editor")).not.toContainText("TYPED BY A READER");
      await expect(prompt.getByText("edited", { exact: true })).toHaveCount(0);
      await expect(prompt.getByRole("button", { name: "Save as version…" })).toHaveCount(0);

      await expectAccessible(page);
      await expectNoSidewaysScroll(page);

      await p.input().fill("Invoice from Lampworks");
      await p.run();
      await expect(p.result().getByTestId("result-object")).toContainText('"vendor"');
      expect(await lastSystemPrompt()).toContain("READ-ONLY SAVED INSTRUCTIONS");
    });
  });
}
