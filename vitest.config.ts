import path from "node:path";
import { defineConfig } from "vitest/config";

const root = import.meta.dirname;

export default defineConfig({
  resolve: {
    alias: {
      "@": root,
      // The marker package throws outside a React server bundle; tests run server code directly.
      "server-only": path.join(root, "node_modules/server-only/empty.js"),
    },
  },
  test: {
    include: ["lib/**/*.test.ts", "components/**/*.test.{ts,tsx}", "test/**/*.test.ts"],
    // Builds the web app once (when sources changed) before the HTTP suites start servers from it.
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 180_000,
    pool: "forks",
  },
});
