import "server-only";
import type { Config, ModelConfig } from "../config/config-types";
import { createAiSdkModel } from "./ai-sdk";
import type { GrammarCompiler } from "../grammar/grammar-pool";
import { createLlamaCppModel, type LlamaCppOptions, type LocalModelClient, type LocalModelState } from "./llama-cpp";
import { isRemoteSource } from "../config/model-path";
import { MODEL_FIX, type DownloadProgress, type ModelFile } from "./model-source";
import { GenserveError } from "../errors";
import type { ModelClient } from "./model-client";

export interface ModelStatus {
  alias: string;
  provider: ModelConfig["provider"];
  /** Whether image attachments are passed to it. */
  vision: boolean;
  /** Remote providers are "ready" as far as genserve can tell; local models say how loading went. */
  status: LocalModelState | { state: "ready"; name: string } | DownloadingState;
}

/** A local model's file being fetched again (an admin's "Retry download"): bytes so far, of how many (0: not known yet). */
export interface DownloadingState {
  state: "downloading";
  downloadedBytes: number;
  totalBytes: number;
}

/** Fetches a model source into the data directory (`ensureModelFile` bound to it); never throws. */
export type ModelDownloader = (source: string, onProgress: (progress: DownloadProgress) => void) => Promise<ModelFile>;

export interface RegistryOptions {
  /** What `genserve serve` found (or downloaded) for each local model, by alias. */
  localFiles?: Readonly<Record<string, ModelFile>>;
  /** The grammar compiler local models share (needed as soon as one is configured). */
  grammars?: GrammarCompiler;
  log?: LlamaCppOptions["log"];
  onLaneWait?: LlamaCppOptions["onLaneWait"];
  /** What providers are called with (default: the global fetch). */
  fetch?: typeof globalThis.fetch;
  /** How "Retry download" fetches a local model's file again (without it, retrying is refused). */
  download?: ModelDownloader;
}

/** One client per configured alias, created on first use. */
export class ModelRegistry {
  private readonly clients = new Map<string, ModelClient>();
  /** Files found again by a retried download, by alias (they replace what `genserve serve` found). */
  private readonly files = new Map<string, ModelFile>();
  /** Downloads under way, by alias: at most one each, however many ask. */
  private readonly downloads = new Map<string, DownloadingState>();

  constructor(
    private readonly config: Config,
    private readonly options: RegistryOptions = {},
    private readonly factory: (model: ModelConfig) => ModelClient = (model) => this.create(model),
  ) {}

  get(alias: string): ModelClient {
    let client = this.clients.get(alias);
    if (!client) {
      const model = this.config.models[alias];
      if (!model) throw new Error(`unknown model alias ${alias}`); // config validation makes this unreachable
      client = this.factory(model);
      this.clients.set(alias, client);
    }
    return client;
  }

  /** Starts loading every local model, so the first run does not wait and problems show at once. */
  warmLocal(): void {
    for (const model of Object.values(this.config.models)) {
      if (model.provider === "llama-cpp") void (this.get(model.alias) as LocalModelClient).warm();
    }
  }

  statuses(): ModelStatus[] {
    return Object.values(this.config.models).map((model) => this.statusOf(model));
  }

  private statusOf(model: ModelConfig): ModelStatus {
    const downloading = this.downloads.get(model.alias);
    return {
      alias: model.alias,
      provider: model.provider,
      vision: model.vision,
      status: downloading
        ? { ...downloading }
        : model.provider === "llama-cpp"
          ? (this.get(model.alias) as LocalModelClient).status
          : { state: "ready", name: model.model },
    };
  }

  /**
   * Fetches an unavailable local model's file again (a failed download, a file put in place since),
   * in the background: the status says `downloading` meanwhile, then `loading` and `ready`, or
   * `unavailable` with the new reason. A retry asked for while one is under way joins it (no second
   * download). Answers the status right after the call.
   */
  retryDownload(alias: string): ModelStatus {
    const model = this.config.models[alias];
    if (!model) throw new GenserveError("not_found", { detail: `No model "${alias}" is configured.` });
    if (model.provider !== "llama-cpp" || !model.path) throw new GenserveError("conflict", { detail: `Model "${alias}" is not a local model: there is nothing to download.` });
    if (this.downloads.has(alias)) return this.statusOf(model);
    const state = (this.get(alias) as LocalModelClient).status.state;
    if (state !== "unavailable") throw new GenserveError("conflict", { detail: `Model "${alias}" is ${state}: there is nothing to retry.` });
    const download = this.options.download;
    if (!download) throw new GenserveError("conflict", { detail: "This server cannot download models (no data directory)." });
    const progress: DownloadingState = { state: "downloading", downloadedBytes: 0, totalBytes: 0 };
    this.downloads.set(alias, progress);
    const source = model.path;
    void (async () => {
      const file = await download(source, (p) => {
        progress.downloadedBytes = p.downloadedBytes;
        progress.totalBytes = p.totalBytes;
      }).catch((error: unknown): ModelFile => ({ ok: false, detail: `The model could not be downloaded: ${(error as Error).message ?? String(error)}.`, fix: MODEL_FIX }));
      this.options.log?.(file.ok ? "info" : "error", file.ok ? "local model file ready" : "local model not available", { alias, source, ...(file.ok ? { file: file.file } : { detail: file.detail }) });
      // The old client could never run (unavailable): a new one with what was found takes its place.
      const old = this.clients.get(alias) as Partial<LocalModelClient> | undefined;
      this.files.set(alias, file);
      this.clients.delete(alias);
      const next = this.get(alias) as LocalModelClient;
      this.downloads.delete(alias);
      await old?.dispose?.().catch(() => undefined);
      if (file.ok) await next.warm().catch(() => undefined);
    })();
    return this.statusOf(model);
  }

  /** Each local model's lanes (only those loaded or loading: a model nobody used is not started for this). */
  localEngines(): { alias: string; parallel: number; busy: number; waiting: number }[] {
    return Object.values(this.config.models)
      .filter((model) => model.provider === "llama-cpp" && this.clients.has(model.alias))
      .map((model) => ({ alias: model.alias, ...(this.clients.get(model.alias) as LocalModelClient).lanes() }));
  }

  async dispose(): Promise<void> {
    for (const client of this.clients.values()) await (client as Partial<LocalModelClient>).dispose?.();
  }

  private create(model: ModelConfig): ModelClient {
    if (model.provider !== "llama-cpp") return createAiSdkModel(model, { fetch: this.options.fetch });
    const file: ModelFile = this.files.get(model.alias) ?? this.options.localFiles?.[model.alias] ?? localFileOnly(model.path!);
    const grammars = this.options.grammars;
    if (!grammars) throw new Error(`local model ${model.alias} needs a grammar compiler (RegistryOptions.grammars)`);
    return createLlamaCppModel(model, { file, grammars, log: this.options.log, onLaneWait: this.options.onLaneWait });
  }
}

/** Without `genserve serve`'s resolution (tests, tools): a local path is used as is, URIs are not fetched. */
function localFileOnly(source: string): ModelFile {
  if (!isRemoteSource(source)) return { ok: true, file: source };
  return { ok: false, detail: `The model ${source} has not been downloaded.`, fix: MODEL_FIX };
}
