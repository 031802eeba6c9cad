import "server-only";
import type { AuthSettings, DatabaseSettings, Limits, ObservabilitySettings, ProviderName, ServerSettings } from "./schema";

export interface ModelConfig {
  alias: string;
  provider: ProviderName;
  /** The provider's model id; for llama-cpp, the model file's name until it is loaded. */
  model: string;
  /** llama-cpp: a local file (absolute), or the hf:/http(s) URI it is downloaded from. */
  path?: string;
  /** llama-cpp: concurrent sequences, and the bound on runs waiting for one. */
  parallel: number;
  queue: number;
  threads?: number;
  baseURL?: string;
  apiKey?: string;
  headers?: Record<string, string>;
  pricing: { input: number; output: number };
  structuredOutputs: boolean;
  contextWindow?: number;
  vision: boolean;
}

export interface WorkflowConfig {
  slug: string;
  description: string;
  /** What this version changed (saved with it). */
  note?: string;
  model: string;
  instructions: string;
  temperature?: number;
  maxOutputTokens?: number;
  retries: number;
  timeoutMs: number;
  contexts: string[];
  /** What the playground offers to start from. */
  example?: { input: string; schema?: Record<string, unknown> };
  /** The schema object runs use when the request has none (a request's schema wins). */
  schema?: Record<string, unknown>;
}

export interface ContextConfig {
  slug: string;
  title: string;
  content: string;
}

/** Where the key sealing stored secrets comes from, resolved when the configuration is parsed (the variable read here, once). */
export type SecretsKeySource = { kind: "file"; path: string } | { kind: "env"; name: string; value: string | undefined };

/** The validated, frozen configuration every module receives explicitly. */
export interface Config {
  /** Absolute path of the file it came from, or null when the server runs without one. */
  file: string | null;
  models: Readonly<Record<string, ModelConfig>>;
  workflows: Readonly<Record<string, WorkflowConfig>>;
  contexts: Readonly<Record<string, ContextConfig>>;
  network: { allowPrivate: boolean };
  server: ServerSettings;
  database: DatabaseSettings;
  observability: ObservabilitySettings;
  limits: Limits;
  /** How people sign in (OpenID Connect, sessions, password attempts). */
  auth: AuthSettings;
  security: { secretsKey: SecretsKeySource | null };
}
