import { defineConfig } from "@playwright/test";

/**
 * Browser tests against the built app, a real `genserve serve` and the fake OpenAI-compatible
 * upstream (both started by e2e/global-setup.ts). Playwright cannot download its own browsers in
 * every environment: it uses the system Chromium (Debian: `apt-get install chromium`), or the one
 * named by CHROMIUM_PATH.
 */
export default defineConfig({
  testDir: "e2e",
  workers: 1,
  timeout: 60_000,
  expect: { timeout: 15_000 },
  reporter: [["list"]],
  globalSetup: "./e2e/global-setup.ts",
  use: {
    viewport: { width: 1280, height: 800 },
    trace: "retain-on-failure",
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    },
  },
});
