import { expect, test } from "@playwright/test";
import { HOLD_MARKER } from "../test/helpers/fake-upstream";
import { BASE, KEY, PlaygroundPage, watchCspViolations } from "./pages";

// The playground's runs go through the client package (lib/sdk via lib/client/api.ts): its stream
// reader, its generate calls and its cancel, in the browser's bundle.
const cspViolations = new WeakMap<object, string[]>();
test.beforeEach(({ page }) => void cspViolations.set(page, watchCspViolations(page)));
test.afterEach(({ page }) => expect(cspViolations.get(page) ?? []).toEqual([]));

const SCHEMA = JSON.stringify({ type: "object", properties: { number: { type: "string" }, total: { type: "number" } }, required: ["number", "total"] });
/** Long enough that the fake model, told to hold, stalls mid-object (after 12 chunks). */
const LONG_SCHEMA = JSON.stringify({
  type: "object",
  properties: { number: { type: "string" }, note: { type: "string", enum: ["a long note that takes a while to stream in, chunk after chunk after chunk, so that the model stalls before it ends"] } },
  required: ["number", "note"],
});

async function runOnServer(id: string): Promise<{ status: string; error?: { code: string } }> {
  return (await (await fetch(`${BASE()}/api/v1/runs/${id}`, { headers: { "api-key": KEY() } })).json()) as { status: string; error?: { code: string } };
}

test.describe("the playground on the client package", () => {
  test("streams an object to its end, then generates one", async ({ page }) => {
    const p = new PlaygroundPage(page);
    await p.open();
    await p.signIn();
    await p.operation().selectOption({ label: "Stream object" });
    await p.workflow().selectOption("extract-invoice");
    await p.input().fill("Invoice INV-11, 3 EUR");
    await p.typeSchema(SCHEMA);
    const streamed = page.waitForRequest((r) => r.url().endsWith("/api/v1/stream/object?cancelOnDisconnect=true"));
    await p.run();
    expect((await streamed).headers()["accept"]).toBe("text/event-stream");
    await expect(page.getByRole("status")).toHaveText("Complete");
    await expect(p.result().getByTestId("result-object")).toContainText('"number"');
    await expect(p.metadata().getByTestId("meta-run-id")).toContainText("run_");

    await p.operation().selectOption({ label: "Generate object" });
    const generated = page.waitForResponse((r) => r.url().endsWith("/api/v1/generate/object?cancelOnDisconnect=true"));
    await p.run();
    expect((await generated).status()).toBe(200);
    await expect(page.getByRole("status")).toHaveText("Complete");
    await expect(p.result().getByTestId("result-object")).toContainText('"total"');
  });

  test("Cancel stops a streamed run on the server", async ({ page }) => {
    const p = new PlaygroundPage(page);
    await p.open();
    await p.signIn();
    await p.operation().selectOption({ label: "Stream object" });
    await p.workflow().selectOption("extract-invoice");
    await p.input().fill(`Invoice INV-12 ${HOLD_MARKER}`);
    await p.typeSchema(LONG_SCHEMA);
    const started = page.waitForResponse((r) => r.url().includes("/api/v1/stream/object"));
    await p.run();
    const runId = (await started).headers()["x-run-id"]!;
    await expect(p.result().getByTestId("result-object")).toContainText('"number"');
    await page.getByRole("button", { name: "Cancel", exact: true }).click();
    await expect(p.result().getByTestId("run-status")).toContainText(/^Cancelled at /);
    await expect.poll(async () => (await runOnServer(runId)).status, { timeout: 15_000 }).toBe("cancelled");
  });
});
