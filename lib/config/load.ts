import "server-only";
import { readFileSync, existsSync } from "node:fs";
import path from "node:path";
import YAML from "yaml";
import type { z } from "zod";
import { isRemoteSource } from "./model-path";
import { fileConfigSchema, type FileConfig } from "./schema";
import type { Config, ContextConfig, ModelConfig, WorkflowConfig } from "./config-types";

/** A configuration problem: the file, the path of each bad value and why. Stops start-up. */
export class ConfigError extends Error {
  constructor(
    readonly file: string,
    readonly problems: { path: string; message: string }[],
  ) {
    super(`${file}: invalid configuration\n${problems.map((p) => `  - ${p.path || "(root)"}: ${p.message}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

export interface LoadConfigOptions {
  /** Path given by the user (--config); when absent, `./genserve.yaml` is used if it exists. */
  file?: string;
  cwd: string;
  /** Variables available to `${NAME}` references. */
  env: Readonly<Record<string, string | undefined>>;
  /** `--model FILE.gguf`: the local model to use as `local` (and for the `default` workflow). */
  model?: string;
}

/**
 * The embedded default model: Qwen2.5 0.5B Instruct (Apache-2.0), 4-bit, under 500 MB. Small enough
 * for a laptop CPU, and good at following a JSON Schema under constrained decoding.
 */
export const DEFAULT_LOCAL_MODEL = "hf:Qwen/Qwen2.5-0.5B-Instruct-GGUF/qwen2.5-0.5b-instruct-q4_k_m.gguf";
export const LOCAL_MODEL_ALIAS = "local";
export const DEFAULT_WORKFLOW = "default";

const modelOption = (options: LoadConfigOptions) =>
  options.model === undefined || isRemoteSource(options.model) ? options.model : path.resolve(options.cwd, options.model);


/**
 * Adds the embedded local model (`local`) and a `default` workflow on it: with no configuration
 * file, or when `--model` names a model file. A configured `default` workflow is kept.
 */
function withLocalModel(raw: Record<string, unknown>, model: string | undefined, noFile: boolean): Record<string, unknown> {
  if (!noFile && model === undefined) return raw;
  const models = { ...((raw.models as Record<string, unknown>) ?? {}) };
  const workflows = { ...((raw.workflows as Record<string, unknown>) ?? {}) };
  models[LOCAL_MODEL_ALIAS] = { provider: "llama-cpp", path: model ?? DEFAULT_LOCAL_MODEL };
  workflows[DEFAULT_WORKFLOW] ??= {
    description: "General-purpose workflow on the embedded local model",
    model: LOCAL_MODEL_ALIAS,
    instructions: "Answer the input. When a JSON Schema is given, reply with JSON that follows it.",
  };
  return { ...raw, models, workflows };
}

export const DEFAULT_CONFIG_FILE = "genserve.yaml";

/** Reads, interpolates and validates genserve.yaml once; the result is deeply frozen. */
export function loadConfig(options: LoadConfigOptions): Config {
  const explicit = options.file !== undefined;
  const file = path.resolve(options.cwd, options.file ?? DEFAULT_CONFIG_FILE);
  if (!existsSync(file)) {
    if (explicit) throw new ConfigError(file, [{ path: "", message: "file not found" }]);
    const parsed = fileConfigSchema.safeParse(withLocalModel({}, modelOption(options), true), { reportInput: true });
    if (!parsed.success) throw new ConfigError("(defaults)", zodProblems(parsed.error));
    return buildConfig(null, parsed.data, options.cwd, options.env);
  }
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new ConfigError(file, [{ path: "", message: `cannot read file: ${(error as Error).message}` }]);
  }
  return parseConfigText(text, file, options.env, modelOption(options));
}

/** Validates configuration text as if it were read from `file` (tests and `genserve config check`). */
export function parseConfigText(text: string, file: string, env: LoadConfigOptions["env"], model?: string): Config {
  let raw: unknown;
  try {
    raw = YAML.parse(text, { prettyErrors: true, uniqueKeys: true }) ?? {};
  } catch (error) {
    throw new ConfigError(file, [{ path: "", message: `not valid YAML: ${(error as Error).message.split("\n")[0]}` }]);
  }
  const envProblems: { path: string; message: string }[] = [];
  const interpolated = interpolate(raw, env, [], envProblems);
  if (envProblems.length > 0) throw new ConfigError(file, envProblems);

  const parsed = fileConfigSchema.safeParse(withLocalModel(interpolated as Record<string, unknown>, model, false), { reportInput: true });
  if (!parsed.success) throw new ConfigError(file, zodProblems(parsed.error));
  return buildConfig(file, parsed.data, path.dirname(file), env);
}

function buildConfig(file: string | null, data: FileConfig, baseDir: string, env: LoadConfigOptions["env"]): Config {
  const problems: { path: string; message: string }[] = [];

  const models = lookupTable<ModelConfig>();
  for (const [alias, m] of Object.entries(data.models)) {
    models[alias] = {
      alias,
      provider: m.provider as ModelConfig["provider"],
      model: m.model ?? (m.path ? path.basename(m.path) : alias),
      path: m.path && !isRemoteSource(m.path) ? path.resolve(baseDir, m.path) : m.path,
      parallel: m.parallel,
      queue: m.queue,
      threads: m.threads,
      baseURL: m.baseURL,
      apiKey: m.apiKey,
      headers: m.headers,
      pricing: { input: m.pricing?.input ?? 0, output: m.pricing?.output ?? 0 },
      structuredOutputs: m.structuredOutputs,
      contextWindow: m.contextWindow,
      vision: m.vision,
    };
  }

  const contexts = lookupTable<ContextConfig>();
  for (const [slug, c] of Object.entries(data.contexts)) {
    let content = c.content;
    if (c.file !== undefined) {
      const contextFile = path.resolve(baseDir, c.file);
      try {
        content = readFileSync(contextFile, "utf8");
      } catch (error) {
        problems.push({ path: `contexts.${slug}.file`, message: `cannot read ${contextFile}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` });
        continue;
      }
    }
    contexts[slug] = { slug, title: c.title ?? slug, content: content ?? "" };
  }

  const workflows = lookupTable<WorkflowConfig>();
  for (const [slug, w] of Object.entries(data.workflows)) {
    if (!models[w.model]) {
      problems.push({ path: `workflows.${slug}.model`, message: `unknown model alias "${w.model}"${hint(Object.keys(models))}` });
    }
    w.contexts.forEach((contextSlug, i) => {
      if (!Object.hasOwn(data.contexts, contextSlug)) {
        problems.push({ path: `workflows.${slug}.contexts.${i}`, message: `unknown context "${contextSlug}"${hint(Object.keys(data.contexts))}` });
      }
    });
    workflows[slug] = { slug, ...w, contexts: [...new Set(w.contexts)] };
  }

  if (problems.length > 0) throw new ConfigError(file ?? "(defaults)", problems);
  return deepFreeze({ file, models, workflows, contexts, network: data.network, server: data.server, database: data.database, observability: data.observability, limits: data.limits, auth: data.auth, security: { secretsKey: secretsKeySource(data.security.secretsKey, baseDir, env) } });
}

function secretsKeySource(setting: FileConfig["security"]["secretsKey"], baseDir: string, env: LoadConfigOptions["env"]): Config["security"]["secretsKey"] {
  if (!setting) return null;
  return "file" in setting ? { kind: "file", path: path.resolve(baseDir, setting.file) } : { kind: "env", name: setting.env, value: env[setting.env] };
}

function hint(known: string[]): string {
  return known.length > 0 ? ` (defined: ${known.join(", ")})` : " (none are defined)";
}

const ENV_REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** Replaces `${NAME}` and `${NAME:-default}` in every string value; an unset variable is a problem. */
function interpolate(value: unknown, env: LoadConfigOptions["env"], at: (string | number)[], problems: { path: string; message: string }[]): unknown {
  if (typeof value === "string") {
    return value.replace(ENV_REF, (_match, name: string, fallback: string | undefined) => {
      const found = env[name];
      if (found !== undefined && found !== "") return found;
      if (fallback !== undefined) return fallback;
      problems.push({ path: at.join("."), message: `environment variable ${name} is not set` });
      return "";
    });
  }
  if (Array.isArray(value)) return value.map((item, i) => interpolate(item, env, [...at, i], problems));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, env, [...at, k], problems)]));
  }
  return value;
}

function zodProblems(error: z.ZodError): { path: string; message: string }[] {
  return error.issues.map((issue) => {
    const where = issue.path.map(String).join(".");
    if (issue.code === "unrecognized_keys") {
      return { path: where, message: `unknown field${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => `"${k}"`).join(", ")}` };
    }
    if (issue.code === "invalid_type" && issue.input === undefined) return { path: where, message: "is required" };
    return { path: where, message: issue.message };
  });
}

/**
 * A table keyed by names callers send (workflow slugs, model aliases): without a prototype, so
 * "toString" or "__proto__" finds nothing instead of an inherited member.
 */
function lookupTable<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

export { DEFAULT_LIMITS } from "./schema";
