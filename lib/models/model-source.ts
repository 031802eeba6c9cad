/**
 * Where a local model's weights come from: a file on disk, or an `hf:` URI / http(s) URL that is
 * downloaded once into `<data dir>/models`. Downloads go through node-llama-cpp's downloader
 * (ipull), which keeps a partial file and resumes it on the next attempt. A manifest records which
 * file each URI became, so a restart without network still finds the model.
 */
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";

export type ModelFile = { ok: true; file: string } | { ok: false; detail: string; fix: string };

export interface DownloadProgress {
  file: string;
  downloadedBytes: number;
  totalBytes: number;
  bytesPerSecond: number;
  etaSeconds: number;
}

export const isRemoteSource = (source: string) => /^(hf:|https?:\/\/)/i.test(source);

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
 * One request with a deadline before the downloader starts: its own retries would otherwise wait
 * for minutes on a machine with no network, and say little about why.
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
): Promise<ModelFile> {
  if (!isRemoteSource(source)) {
    if (existsSync(source) && statSync(source).isFile()) return { ok: true, file: source };
    return { ok: false, detail: `The model file ${source} does not exist.`, fix: MODEL_FIX };
  }
  const dir = path.join(dataDir, "models");
  const known = readManifest(dir)[source];
  if (known && existsSync(path.join(dir, known))) return { ok: true, file: path.join(dir, known) };

  const url = describeSource(source);
  try {
    mkdirSync(dir, { recursive: true });
    await reachable(url);
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
        onProgress?.({
          file: downloader.entrypointFilename,
          downloadedBytes: downloadedSize,
          totalBytes: totalSize,
          bytesPerSecond: rate,
          etaSeconds: rate > 0 ? (totalSize - downloadedSize) / rate : Infinity,
        });
      },
    });
    // A download that stops moving is cancelled; its partial file stays for the next attempt.
    let stalled = false;
    const watchdog = setInterval(() => {
      if (Date.now() - lastProgress < STALL_TIMEOUT_MS) return;
      stalled = true;
      void downloader.cancel({ deleteTempFile: false });
    }, 5_000);
    let file: string;
    try {
      file = await downloader.download();
    } finally {
      clearInterval(watchdog);
    }
    if (stalled) throw new Error(`no data arrived for ${STALL_TIMEOUT_MS / 1000} s`);
    writeFileSync(path.join(dir, MANIFEST), `${JSON.stringify({ ...readManifest(dir), [source]: path.basename(file) }, null, 2)}\n`);
    return { ok: true, file };
  } catch (error) {
    const reason = causeOf(error);
    return { ok: false, detail: `The model could not be downloaded from ${url}: ${reason}. It will be tried again on the next start.`, fix: MODEL_FIX };
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
