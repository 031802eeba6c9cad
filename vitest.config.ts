import path from "node:path";
import { defineConfig } from "vitest/config";

const root = import.meta.dirname;

// Two projects, both run by `npm test`: "unit" tests modules in-process and needs no build
// (`npm run test:unit`); "http" starts the real built server, so it builds the app first when its
// sources changed.
export default defineConfig({
  resolve: {
    alias: {
      "@": root,
      // The marker package throws outside a React server bundle; tests run server code directly.
      "server-only": path.join(root, "node_modules/server-only/empty.js"),
    },
  },
  test: {
    // Time-outs guard against hangs, not for speed: the suite must hold on a loaded machine (two
    // copies of it at once), where a test that takes 5 s idle can take several times that.
    testTimeout: 60_000,
    hookTimeout: 180_000,
    pool: "forks",
    projects: [
      { extends: true, test: { name: "unit", include: ["lib/**/*.test.ts", "components/**/*.test.{ts,tsx}"] } },
      { extends: true, test: { name: "http", include: ["test/**/*.test.ts"], globalSetup: ["test/global-setup.ts"], testTimeout: 180_000 } },
    ],
  },
});
