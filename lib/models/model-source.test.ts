import { mkdtempSync, readFileSync, statSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeTinyModel } from "../../test/helpers/tiny-gguf";
import { describeSource, ensureModelFile } from "./model-source";

// A model host on loopback that can be told to stall part-way, to check that a cut download keeps
// its partial file and the next attempt continues from it with Range requests.
let data: Buffer;
let server: http.Server;
let url: string;
let stallAfter: number | null = null;
const ranges: string[] = [];

beforeAll(async () => {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), "model-src-")), "big.gguf");
  writeTinyModel(file, { embedding: 256, layers: 4, feedForward: 768 }); // ~9 MB
  data = readFileSync(file);
  server = http.createServer((req, res) => {
    const m = /bytes=(\d+)-(\d*)/.exec(req.headers.range ?? "");
    const start = m ? Number(m[1]) : 0;
    const end = m?.[2] ? Number(m[2]) + 1 : data.length;
    if (req.method !== "HEAD") ranges.push(req.headers.range ?? "none");
    res.writeHead(m ? 206 : 200, {
      "Content-Length": end - start,
      "Accept-Ranges": "bytes",
      ...(m ? { "Content-Range": `bytes ${start}-${end - 1}/${data.length}` } : {}),
    });
    if (req.method === "HEAD") return res.end();
    if (stallAfter !== null) {
      res.write(data.subarray(start, Math.min(end, start + stallAfter))); // then nothing more: a stall
      return;
    }
    res.end(data.subarray(start, end));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/big.gguf`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

describe("ensureModelFile", () => {
  it("names hf: URIs by the URL they resolve to", () => {
    expect(describeSource("hf:Qwen/Repo-GGUF/model-q4.gguf")).toBe("https://huggingface.co/Qwen/Repo-GGUF/resolve/main/model-q4.gguf");
    expect(describeSource("hf:Qwen/Repo-GGUF:Q4_K_M")).toBe("https://huggingface.co/api/models/Qwen/Repo-GGUF");
  });

  it("a stalled download fails with the URL and the fix, and the next attempt resumes the partial file", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "model-data-"));
    stallAfter = 1_000_000;
    const first = await ensureModelFile(url, dataDir, undefined, { stallTimeoutMs: 1_500 });
    expect(first.ok).toBe(false);
    if (!first.ok) {
      expect(first.detail).toContain(url);
      expect(first.detail).toContain("no data arrived");
      expect(first.fix).toContain("--model");
    }
    stallAfter = null;
    ranges.length = 0;
    const progress: number[] = [];
    const second = await ensureModelFile(url, dataDir, (p) => progress.push(p.downloadedBytes), { stallTimeoutMs: 10_000 });
    expect(second.ok).toBe(true);
    if (!second.ok) return;
    expect(statSync(second.file).size).toBe(data.length);
    expect(readFileSync(second.file).equals(data)).toBe(true);
    // Resumed: no request started from byte 0 again.
    expect(ranges.length).toBeGreaterThan(0);
    expect(ranges.every((r) => r !== "none" && !/^bytes=0-/.test(r)), ranges.join(", ")).toBe(true);
    // A later start finds the file through the manifest, without asking the host.
    ranges.length = 0;
    const third = await ensureModelFile(url, dataDir);
    expect(third).toEqual(second);
    expect(ranges).toEqual([]);
  }, 60_000);
});
