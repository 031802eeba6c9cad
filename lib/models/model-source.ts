/**
 * Where a local model's weights come from: a file on disk, or an `hf:` URI / http(s) URL that is
 * downloaded once into `<data dir>/models`. URLs naming a file are streamed into `<file>.part` and
 * resumed from it with a Range request on the next attempt; `hf:<user>/<repo>:<quant>` URIs go
 * through node-llama-cpp's downloader, which resolves the file from the Hub. A manifest records
 * which file each URI became, so a restart without network still finds the model.
 */
import "server-only";
import { createWriteStream, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { isRemoteSource } from "../config/model-path";

export type ModelFile = { ok: true; file: string } | { ok: false; detail: string; fix: string };

export interface DownloadProgress {
  file: string;
  downloadedBytes: number;
  totalBytes: number;
  bytesPerSecond: number;
  etaSeconds: number;
}

/** hf: URIs and http(s) URLs are downloaded; anything else is a local path. */

/** The fix every "no model" message gives. */
export const MODEL_FIX =
  "Give a local file instead (genserve serve --model /path/to/model.gguf, or path: in genserve.yaml), an hf:<user>/<repo>/<file>.gguf URI that can be reached, or configure a provider such as openai-compatible.";

/** The https URL an hf: URI resolves to (the file, or the repository's API entry for `:quant` URIs). */
export function describeSource(source: string): string {
  const file = /^hf:([^/]+)\/([^/:]+)\/(.+?)(?:#(.+))?$/.exec(source);
  if (file) return `https://huggingface.co/${file[1]}/${file[2]}/resolve/${file[4] ?? "main"}/${file[3]}`;
  const repo = /^hf:([^/]+)\/([^/:#]+)/.exec(source);
  if (repo) return `https://huggingface.co/api/models/${repo[1]}/${repo[2]}`;
  return source;
}

/** How long the first answer from the model's host may take, and how long a download may stall. */
const CONNECT_TIMEOUT_MS = 15_000;
const STALL_TIMEOUT_MS = 60_000;

/**
 * One request with a deadline before node-llama-cpp's downloader starts: its own retries would
 * otherwise wait for minutes on a machine with no network, and say little about why. (The direct
 * download needs none: its stall timer runs from the first byte asked for.)
 */
async function reachable(url: string): Promise<void> {
  const response = await fetch(url, { method: "HEAD", redirect: "follow", signal: AbortSignal.timeout(CONNECT_TIMEOUT_MS) });
  if (!response.ok) throw new Error(`the server answered ${response.status} ${response.statusText}`.trim());
}

const MANIFEST = "sources.json";

function readManifest(dir: string): Record<string, string> {
  try {
    return JSON.parse(readFileSync(path.join(dir, MANIFEST), "utf8")) as Record<string, string>;
  } catch {
    return {};
  }
}

/**
 * Resolves a model source to a file, downloading it if needed. Never throws: a missing file or a
 * failed download comes back as `{ ok: false }` with what went wrong and how to fix it.
 */
export async function ensureModelFile(
  source: string,
  dataDir: string,
  onProgress?: (progress: DownloadProgress) => void,
  options: { stallTimeoutMs?: number } = {},
): Promise<ModelFile> {
  const stallTimeoutMs = options.stallTimeoutMs ?? STALL_TIMEOUT_MS;
  if (!isRemoteSource(source)) {
    if (existsSync(source) && statSync(source).isFile()) return { ok: true, file: source };
    return { ok: false, detail: `The model file ${source} does not exist.`, fix: MODEL_FIX };
  }
  const dir = path.join(dataDir, "models");
  const known = readManifest(dir)[source];
  if (known && existsSync(path.join(dir, known))) return { ok: true, file: path.join(dir, known) };

  const url = describeSource(source);
  // A URL that names the file (http(s), hf:<user>/<repo>/<file>) is fetched here, resumably; a
  // `hf:<user>/<repo>:<quant>` URI needs the Hub's file listing, which node-llama-cpp resolves.
  const direct = !/^hf:[^/]+\/[^/:#]+(:[^/]*)?$/.test(source);
  try {
    mkdirSync(dir, { recursive: true });
    const file = direct
      ? await downloadResumable(url, path.join(dir, fileNameOf(url)), stallTimeoutMs, onProgress)
      : await downloadWithNodeLlamaCpp(source, dir, stallTimeoutMs, onProgress);
    writeFileSync(path.join(dir, MANIFEST), `${JSON.stringify({ ...readManifest(dir), [source]: path.basename(file) }, null, 2)}\n`);
    return { ok: true, file };
  } catch (error) {
    const reason = causeOf(error);
    return { ok: false, detail: `The model could not be downloaded from ${url}: ${reason}. It will be tried again on the next start.`, fix: MODEL_FIX };
  }
}

const fileNameOf = (url: string) => decodeURIComponent(new URL(url).pathname.split("/").pop() || "model.gguf").replace(/[^\w.-]+/g, "_");

/**
 * Streams `url` into `<target>.part`, continuing from the bytes already there with a Range request
 * (a server that ignores the range sends it all again, and the part file starts over), and renames
 * it when the length matches. Stops when no data arrives for `stallTimeoutMs`.
 */
async function downloadResumable(url: string, target: string, stallTimeoutMs: number, onProgress?: (p: DownloadProgress) => void): Promise<string> {
  const part = `${target}.part`;
  const have = existsSync(part) ? statSync(part).size : 0;
  const abort = new AbortController();
  const deadline = (ms: number, why: string) => setTimeout(() => abort.abort(new Error(`${why} for ${ms / 1000} s`)), ms);
  // A host that never answers fails fast; once data flows, a stall of `stallTimeoutMs` stops it.
  const connectMs = Math.min(CONNECT_TIMEOUT_MS, stallTimeoutMs);
  let timer = deadline(connectMs, "no answer");
  const alive = () => {
    clearTimeout(timer);
    timer = deadline(stallTimeoutMs, "no data arrived");
  };
  try {
    const response = await fetch(url, { headers: have > 0 ? { Range: `bytes=${have}-` } : {}, redirect: "follow", signal: abort.signal });
    if (response.status === 416 && have > 0) {
      // Nothing left to fetch: the part file is complete.
      renameSync(part, target);
      return target;
    }
    alive();
    if (!response.ok || !response.body) throw new Error(`the server answered ${response.status} ${response.statusText}`.trim());
    const resumed = response.status === 206;
    const offset = resumed ? have : 0;
    const remaining = Number(response.headers.get("content-length") ?? NaN);
    const total = offset + remaining;
    const out = createWriteStream(part, { flags: resumed ? "a" : "w" });
    const started = Date.now();
    let received = 0;
    const name = path.basename(target);
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        alive();
        received += chunk.length;
        const seconds = (Date.now() - started) / 1000;
        const rate = seconds > 0 ? received / seconds : 0;
        onProgress?.({ file: name, downloadedBytes: offset + received, totalBytes: total, bytesPerSecond: rate, etaSeconds: rate > 0 ? (total - offset - received) / rate : Infinity });
        done(null, chunk);
      },
    });
    await pipeline(Readable.fromWeb(response.body as never), counter, out);
    const size = statSync(part).size;
    if (Number.isFinite(total) && size !== total) throw new Error(`the download ended at ${size} of ${total} bytes`);
    renameSync(part, target);
    return target;
  } catch (error) {
    throw abort.signal.aborted ? abort.signal.reason : error;
  } finally {
    clearTimeout(timer);
  }
}

/** `hf:<user>/<repo>:<quant>` through node-llama-cpp's downloader (it lists the repository's files). */
async function downloadWithNodeLlamaCpp(source: string, dir: string, stallTimeoutMs: number, onProgress?: (p: DownloadProgress) => void): Promise<string> {
  await reachable(describeSource(source));
  const { createModelDownloader } = await import("node-llama-cpp");
  const started = Date.now();
  let lastProgress = Date.now();
  const downloader = await createModelDownloader({
    modelUri: source,
    dirPath: dir,
    showCliProgress: false,
    deleteTempFileOnCancel: false,
    onProgress: ({ totalSize, downloadedSize }) => {
      lastProgress = Date.now();
      const seconds = (Date.now() - started) / 1000;
      const rate = seconds > 0 ? downloadedSize / seconds : 0;
      onProgress?.({ file: downloader.entrypointFilename, downloadedBytes: downloadedSize, totalBytes: totalSize, bytesPerSecond: rate, etaSeconds: rate > 0 ? (totalSize - downloadedSize) / rate : Infinity });
    },
  });
  let stalled = false;
  const watchdog = setInterval(() => {
    if (Date.now() - lastProgress < stallTimeoutMs) return;
    stalled = true;
    void downloader.cancel({ deleteTempFile: false });
  }, Math.min(5_000, stallTimeoutMs / 4));
  try {
    const file = await downloader.download();
    if (stalled) throw new Error(`no data arrived for ${stallTimeoutMs / 1000} s`);
    return file;
  } catch (error) {
    // Stop any connection the downloader still has going.
    await downloader.cancel({ deleteTempFile: false }).catch(() => undefined);
    throw stalled ? new Error(`no data arrived for ${stallTimeoutMs / 1000} s`) : error;
  } finally {
    clearInterval(watchdog);
  }
}

function causeOf(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current && depth < 4; depth++) {
    const e = current as { message?: string; code?: string; cause?: unknown };
    const text = e.code && !String(e.message).includes(e.code) ? `${e.message} (${e.code})` : e.message;
    if (text && !parts.includes(text)) parts.push(text);
    current = e.cause;
  }
  return parts.join(": ").replace(/\.$/, "") || "unknown error";
}

/** One terminal line for a download: bytes, rate and time left. */
export function formatProgress(p: DownloadProgress): string {
  const mb = (n: number) => (n / 1e6).toFixed(1);
  const pct = p.totalBytes > 0 ? Math.floor((p.downloadedBytes / p.totalBytes) * 100) : 0;
  const width = 24;
  const filled = Math.round((pct / 100) * width);
  const eta = Number.isFinite(p.etaSeconds) ? `${Math.floor(p.etaSeconds / 60)}:${String(Math.floor(p.etaSeconds % 60)).padStart(2, "0")}` : "--:--";
  return `${p.file} [${"#".repeat(filled)}${"-".repeat(width - filled)}] ${pct}% ${mb(p.downloadedBytes)}/${mb(p.totalBytes)} MB ${mb(p.bytesPerSecond)} MB/s ETA ${eta}`;
}
