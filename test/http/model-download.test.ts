import { createReadStream, statSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CALLBACK } from "../helpers/config";
import { createKey, get, post, startGenserve, tempDir, type GenserveServer } from "../helpers/genserve";
import { waitUntil } from "../helpers/receiver";
import { writeTinyModel } from "../helpers/tiny-gguf";

// "Retry download" (admins): the embedded model's URL is a host this test runs, which first fails
// (as offline), then holds a request (so two retries overlap), then serves a tiny GGUF.

type Mode = "fail" | "hold" | "serve";

describe("POST /api/v1/models/{alias}/download", () => {
  const dir = tempDir();
  const dataDir = path.join(dir, "data");
  const modelFile = path.join(dir, "tiny.gguf");
  let mode: Mode = "fail";
  let requests = 0;
  const held: http.ServerResponse[] = [];
  const host = http.createServer((req, res) => {
    requests++;
    if (mode === "fail") return res.writeHead(503, { "Content-Type": "text/plain" }).end("offline");
    if (mode === "hold") return void held.push(res);
    const size = statSync(modelFile).size;
    res.writeHead(200, { "Content-Type": "application/octet-stream", "Content-Length": size, "Accept-Ranges": "none" });
    createReadStream(modelFile).pipe(res);
  });
  let srv: GenserveServer;
  let admin: string;
  let user: string;
  const modelState = async () => (await get(srv, "/api/v1/models", admin)).json.models.find((m: { alias: string }) => m.alias === "local").status;

  beforeAll(async () => {
    writeTinyModel(modelFile);
    await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(host.address() as AddressInfo).port}/tiny.gguf`;
    srv = await startGenserve({ dataDir, cwd: dir, env: { GENSERVE_MODEL: url } });
    admin = srv.adminKey!;
    user = (await createKey("user", { dataDir })).key;
  }, 240_000);

  afterAll(async () => {
    await srv?.stop();
    for (const res of held) res.destroy();
    await new Promise((resolve) => host.close(resolve));
  });

  it("starts with the download failed: the model is unavailable and says why", async () => {
    expect(requests).toBe(1);
    expect(await modelState()).toMatchObject({ state: "unavailable", detail: expect.stringContaining("503") });
  });

  it("is refused to a key that is not an admin (403), and for an unknown alias (404), without downloading", async () => {
    const refused = await post(srv, "/api/v1/models/local/download", {}, user);
    expect(refused.status).toBe(403);
    expect(refused.json.code).toBe("forbidden");
    const unknown = await post(srv, "/api/v1/models/nope/download", {}, admin);
    expect(unknown.status).toBe(404);
    expect(requests).toBe(1);
  });

  it("retries once however many ask at the same time, and reports the new failure", async () => {
    mode = "hold";
    const first = await post(srv, "/api/v1/models/local/download", {}, admin);
    expect(first.status, first.text).toBe(202);
    expect(first.json.status.state).toBe("downloading");
    await waitUntil(() => held.length === 1, "the retried download reaches the host");
    // Two more while the first is held: both join it.
    const [second, third] = await Promise.all([post(srv, "/api/v1/models/local/download", {}, admin), post(srv, "/api/v1/models/local/download", {}, admin)]);
    expect([second.status, third.status]).toEqual([202, 202]);
    expect(second.json.status.state).toBe("downloading");
    expect(await modelState()).toMatchObject({ state: "downloading" });
    // Runs stay refused meanwhile.
    const run = await post(srv, "/api/v1/generate/text", { type: "event", callback: CALLBACK, workflowSlug: "default", input: "x" }, admin);
    expect(run.status).toBe(503);
    held.shift()!.writeHead(500, { "Content-Type": "text/plain" }).end("still offline");
    await waitUntil(async () => (await modelState()).state === "unavailable", "the retry fails");
    expect(await modelState()).toMatchObject({ state: "unavailable", detail: expect.stringContaining("500") });
    expect(requests).toBe(2);
    expect(held).toHaveLength(0);
  }, 60_000);

  it("a retry that gets the file: the model loads and runs", async () => {
    mode = "serve";
    const res = await post(srv, "/api/v1/models/local/download", {}, admin);
    expect(res.status, res.text).toBe(202);
    await waitUntil(async () => (await modelState()).state === "ready", "the model is downloaded and loaded");
    expect(requests).toBe(3);
    const run = await post(srv, "/api/v1/generate/text", { type: "event", callback: CALLBACK, workflowSlug: "default", input: "x" }, admin);
    expect(run.status, run.text).toBe(200);
    // Nothing left to retry.
    const again = await post(srv, "/api/v1/models/local/download", {}, admin);
    expect(again.status).toBe(409);
    expect(again.json.code).toBe("conflict");
  }, 120_000);
});
