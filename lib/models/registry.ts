import "server-only";
import type { Config, ModelConfig } from "../config/types";
import { createAiSdkModel } from "./ai-sdk";
import type { GrammarCompiler } from "../grammar/grammar-pool";
import { createLlamaCppModel, type LlamaCppOptions, type LocalModelClient, type LocalModelState } from "./llama-cpp";
import { isRemoteSource } from "../config/model-path";
import { MODEL_FIX, type ModelFile } from "./model-source";
import type { ModelClient } from "./types";

export interface ModelStatus {
  alias: string;
  provider: ModelConfig["provider"];
  /** Whether image attachments are passed to it. */
  vision: boolean;
  /** Remote providers are "ready" as far as genserve can tell; local models say how loading went. */
  status: LocalModelState | { state: "ready"; name: string };
}

export interface RegistryOptions {
  /** What `genserve serve` found (or downloaded) for each local model, by alias. */
  localFiles?: Readonly<Record<string, ModelFile>>;
  /** The grammar compiler local models share (needed as soon as one is configured). */
  grammars?: GrammarCompiler;
  log?: LlamaCppOptions["log"];
  onLaneWait?: LlamaCppOptions["onLaneWait"];
  /** What providers are called with (default: the global fetch). */
  fetch?: typeof globalThis.fetch;
}

/** One client per configured alias, created on first use. */
export class ModelRegistry {
  private readonly clients = new Map<string, ModelClient>();

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
    return Object.values(this.config.models).map((model) => ({
      alias: model.alias,
      provider: model.provider,
      vision: model.vision,
      status: model.provider === "llama-cpp" ? (this.get(model.alias) as LocalModelClient).status : { state: "ready", name: model.model },
    }));
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
    const file: ModelFile = this.options.localFiles?.[model.alias] ?? localFileOnly(model.path!);
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
