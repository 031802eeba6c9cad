import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

// The package as a program would install it: built by `npm run build:sdk`, imported by its subpath
// exports (genserve/client, /react, /ai) through Node's own ESM resolution, outside vitest's.
const ROOT = path.resolve(import.meta.dirname, "..", "..");

describe("the client package", () => {
  it("builds to ESM with declarations, and its subpath exports import in plain Node", { timeout: 180_000 }, () => {
    execFileSync(process.execPath, ["bin/build-sdk.mjs"], { cwd: ROOT, stdio: "pipe" });
    const out = path.join(ROOT, "dist", "sdk", "sdk");
    for (const entry of ["client", "react", "ai-provider"]) {
      expect(existsSync(path.join(out, `${entry}.js`))).toBe(true);
      expect(readFileSync(path.join(out, `${entry}.d.ts`), "utf8")).toContain("export");
    }
    // Only fetch: what the entries load at run time reaches no Node built-in and no package but React.
    const bare = new Set<string>();
    const seen = new Set<string>();
    const queue = ["client", "react", "ai-provider"].map((entry) => path.join(out, `${entry}.js`));
    while (queue.length > 0) {
      const file = queue.pop()!;
      if (seen.has(file)) continue;
      seen.add(file);
      for (const match of readFileSync(file, "utf8").matchAll(/^(?:import|export)[^;]*?from "([^"]+)";/gm)) {
        if (match[1]!.startsWith(".")) queue.push(path.resolve(path.dirname(file), match[1]!));
        else bare.add(`${path.relative(ROOT, file)}: ${match[1]}`);
      }
    }
    expect([...bare]).toEqual(["dist/sdk/sdk/react.js: react"]);
    const script = `
      const client = await import("genserve/client");
      const react = await import("genserve/react");
      const ai = await import("genserve/ai");
      const c = client.createClient({ baseURL: "http://127.0.0.1:1" });
      const model = ai.createGenserve({ baseURL: "http://127.0.0.1:1" })("extract-invoice");
      console.log(JSON.stringify({
        client: Object.keys(client).sort(),
        react: Object.keys(react).sort(),
        model: [model.specificationVersion, model.provider, model.modelId],
        methods: Object.keys(c).sort(),
        error: new client.GenserveValidationError(400, { code: "validation_failed" }) instanceof client.GenserveApiError,
      }));`;
    const printed = JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: ROOT, encoding: "utf8" }));
    expect(printed.client).toEqual(expect.arrayContaining(["createClient", "verifyCallback", "jsonSchema", "GenserveApiError", "GenserveRunError", "ObjectStream"]));
    expect(printed.react).toEqual(expect.arrayContaining(["useObjectStream", "genserveProxy", "ObjectStreamState"]));
    expect(printed.model).toEqual(["v3", "genserve", "extract-invoice"]);
    expect(printed.methods).toEqual(["cancelRun", "generateObject", "generateText", "getRun", "streamEvents", "streamObject", "submitObject", "submitText", "waitForRun"]);
    expect(printed.error).toBe(true);
  });
});
