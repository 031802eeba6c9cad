import type { Config } from "../config/types";
import { createAiSdkModel } from "./ai-sdk";
import type { ModelClient } from "./types";

/** One client per configured alias, created on first use. */
export class ModelRegistry {
  private readonly clients = new Map<string, ModelClient>();

  constructor(
    private readonly config: Config,
    private readonly factory: (model: Config["models"][string]) => ModelClient = createAiSdkModel,
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
}
