import { afterAll, beforeAll, beforeEach } from "vitest";
import { testConfig } from "./config";
import { startFakeUpstream, type FakeUpstream } from "./fake-upstream";
import { startGenserve, tempDir, writeConfig, type GenserveServer } from "./genserve";

export interface SuiteContext {
  upstream: FakeUpstream;
  server: GenserveServer;
  /** The admin key the server printed at its first start. */
  key: string;
}

/**
 * Starts a fake upstream and a genserve server on it for the enclosing test file (stopped after
 * it); the upstream's script and records are reset before each test.
 */
export function useGenserve(extraConfig = ""): SuiteContext {
  const ctx = {} as SuiteContext;
  beforeAll(async () => {
    ctx.upstream = await startFakeUpstream();
    const dir = tempDir();
    ctx.server = await startGenserve({ configFile: writeConfig(dir, testConfig(ctx.upstream.url, extraConfig)), dataDir: `${dir}/data` });
    ctx.key = ctx.server.adminKey!;
  });
  afterAll(async () => {
    await ctx.server?.stop();
    await ctx.upstream?.close();
  });
  beforeEach(() => ctx.upstream.reset());
  return ctx;
}
