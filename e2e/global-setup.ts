import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { testConfig } from "../test/helpers/config";
import { holdWhenAsked, longListWhenAsked, startFakeUpstream } from "../test/helpers/fake-upstream";
import { startGenserve, tempDir, writeConfig } from "../test/helpers/genserve";
import { writeTinyModel } from "../test/helpers/tiny-gguf";

/** Builds the app if needed, starts the fake upstream and genserve; returns the teardown. */
export default async function globalSetup() {
  const chromium = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
  if (!existsSync(chromium)) {
    throw new Error(`The browser tests need Chromium at ${chromium}: install it (Debian: apt-get install chromium) or set CHROMIUM_PATH.`);
  }
  const root = path.resolve(import.meta.dirname, "..");
  // Through the CLI, as a user would (it builds only when the sources changed).
  execFileSync(process.execPath, [path.join(root, "bin", "genserve.mjs"), "build", "--if-needed"], { cwd: root, stdio: "inherit" });
  // Slow enough chunks that a person (and the tests) can watch the object fill in.
  const upstream = await startFakeUpstream({ chunkDelayMs: 40 });
  // A prompt with HOLD_MARKER stalls mid-stream until cancelled (tests of Cancel must not race the end).
  // One asking for a long list gets it, as fast as it can be sent (the output views' load test).
  const hold = holdWhenAsked();
  const list = longListWhenAsked();
  upstream.respondWith((body) => hold(body) ?? list(body));
  const dir = tempDir("genserve-e2e-");
  const localModel = path.join(dir, "tiny.gguf");
  writeTinyModel(localModel);
  const server = await startGenserve({ configFile: writeConfig(dir, testConfig(upstream.url, "", { localModel })), dataDir: path.join(dir, "data") });
  process.env.GENSERVE_E2E_URL = server.url;
  process.env.GENSERVE_E2E_KEY = server.adminKey!;
  // The fake upstream's address: GET {upstream}/__last-request shows what the model was last sent.
  process.env.GENSERVE_E2E_UPSTREAM = upstream.url;
  return async () => {
    await server.stop();
    await upstream.close();
  };
}
