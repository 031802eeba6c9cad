import { z } from "zod";
import { SLUG } from "../domain/names";

/** Providers genserve can call. Each one is an adapter in `lib/models/`. */
export const PROVIDERS = ["llama-cpp", "openai-compatible", "openai", "anthropic", "ollama"] as const;
export type ProviderName = (typeof PROVIDERS)[number];

const slugMessage = "must be 1-128 characters of letters, digits, '.', '_' or '-', starting with a letter or digit";

const price = z.number().min(0, "must be zero or more (USD per million tokens)");

const modelSchema = z
  .object({
    provider: z.string(),
    model: z.string().min(1, "must name the provider's model id").optional(),
    // llama-cpp: a local .gguf file, an hf:<user>/<repo>:<quant> or hf:<user>/<repo>/<file>.gguf URI, or an http(s) URL.
    path: z.string().min(1).optional(),
    // llama-cpp: runs decoded at once (context sequences), and how many more may wait.
    parallel: z.number().int().min(1).max(64).default(2),
    queue: z.number().int().min(0).default(32),
    threads: z.number().int().min(1).optional(),
    baseURL: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }).optional(),
    apiKey: z.string().optional(),
    headers: z.record(z.string(), z.string()).optional(),
    pricing: z.object({ input: price.default(0), output: price.default(0) }).strict().optional(),
    // Native structured output (json_schema response format). Off for servers that reject it.
    structuredOutputs: z.boolean().default(true),
    contextWindow: z.number().int().positive().optional(),
    vision: z.boolean().default(false),
  })
  .strict()
  .superRefine((model, ctx) => {
    if (!(PROVIDERS as readonly string[]).includes(model.provider)) {
      ctx.addIssue({
        code: "custom",
        path: ["provider"],
        message: `unknown provider "${model.provider}" (expected one of: ${PROVIDERS.join(", ")})`,
      });
    }
    if (model.provider === "llama-cpp") {
      if (!model.path) ctx.addIssue({ code: "custom", path: ["path"], message: "is required for provider llama-cpp (a .gguf file or an hf: URI)" });
    } else if (!model.model) {
      ctx.addIssue({ code: "custom", path: ["model"], message: "is required" });
    }
    if (model.provider === "openai-compatible" && !model.baseURL) {
      ctx.addIssue({ code: "custom", path: ["baseURL"], message: "is required for provider openai-compatible" });
    }
  });

export const workflowSchema = z
  .object({
    description: z.string().default(""),
    /** What this version changed, in a sentence (saved with the version; the next one has its own). */
    note: z.string().max(1000, "must be at most 1,000 characters").optional(),
    model: z.string().min(1, "must name a model alias"),
    instructions: z.string().default(""),
    temperature: z.number().min(0).max(2).optional(),
    maxOutputTokens: z.number().int().positive().optional(),
    retries: z.number().int().min(0).max(10).default(2),
    timeoutMs: z.number().int().min(100).max(3_600_000).default(60_000),
    contexts: z.array(z.string()).default([]),
    /** What the playground offers to start from: an input, and for object runs a schema. */
    example: z
      .object({
        input: z.string().min(1).max(100_000),
        schema: z.custom<Record<string, unknown>>((v) => v !== null && typeof v === "object" && !Array.isArray(v), { error: "must be a JSON Schema object" }).optional(),
      })
      .strict()
      .optional(),
    /** The default schema of object runs that send none; part of the workflow's version. */
    schema: z.custom<Record<string, unknown>>((v) => v !== null && typeof v === "object" && !Array.isArray(v), { error: "must be a JSON Schema object" }).optional(),
  })
  .strict();

export const apiContextSchema = z
  .object({ title: z.string().max(200).optional(), content: z.string({ error: "is required (the context's text)" }).max(4 * 1024 * 1024) })
  .strict();

const contextSchema = z
  .object({
    title: z.string().optional(),
    content: z.string().optional(),
    file: z.string().min(1).optional(),
  })
  .strict()
  .refine((c) => (c.content === undefined) !== (c.file === undefined), {
    message: "needs exactly one of content or file",
  });

const KiB = 1024;
const MiB = 1024 * KiB;

export const limitsSchema = z
  .object({
    bodyBytes: z.number().int().positive().default(32 * MiB),
    /** Nesting of objects and arrays a request body may have. */
    jsonDepth: z.number().int().min(16).max(1_000).default(128),
    inputBytes: z.number().int().positive().default(1 * MiB),
    /**
     * Callers' schemas: real ones (Kubernetes, SchemaStore) run to hundreds of KiB. What a schema
     * costs is bounded by the time budgets below (compile, grammar, validation), not by these counts.
     */
    schemaBytes: z.number().int().positive().default(MiB),
    schemaDepth: z.number().int().positive().default(32),
    schemaProperties: z.number().int().positive().default(50_000),
    schemaEnumValues: z.number().int().positive().default(50_000),
    attachments: z.number().int().min(0).default(10),
    /** A context larger than this share of the model's window is cut to its most relevant chunks. */
    contextShare: z.number().gt(0).max(1).default(0.25),
    contextChunkChars: z.number().int().min(200).default(2_000),
    /** Bytes one attachment may have after decoding (or fetching). */
    attachmentBytes: z.number().int().positive().default(16 * MiB),
    attachmentsTotalBytes: z.number().int().positive().default(24 * MiB),
    attachmentFetchTimeoutMs: z.number().int().positive().default(10_000),
    /** Documents (DOCX, PDF, HTML) are read in worker threads: this many at once. */
    extractWorkers: z.number().int().min(1).max(32).default(2),
    /** Reading one document may take this long (422 past it). */
    attachmentExtractTimeoutMs: z.number().int().min(100).default(15_000),
    /** Heap one document's reading may use, in MB (422 past it). */
    attachmentExtractMemoryMb: z.number().int().min(32).default(1024),
    /** XML a DOCX may unpack to, and text a PDF may hold, in bytes (characters). */
    attachmentUnpackedBytes: z.number().int().positive().default(64 * MiB),
    /** XML or HTML elements one document may have. */
    attachmentElements: z.number().int().positive().default(1_000_000),
    /** Pages one PDF may have. */
    attachmentPages: z.number().int().positive().default(2_000),
    /** Aligning one object with its sources (`grounding`) may take this long; leaves not reached are reported `budget`. */
    groundingTimeoutMs: z.number().int().min(10).default(10_000),
    /** ...and this much work (candidate places weighed, fuzzy comparison cells / 64). */
    groundingWork: z.number().int().positive().default(50_000_000),
    /** A keep-alive comment is sent on an SSE stream that was silent this long. */
    streamKeepAliveMs: z.number().int().positive().default(15_000),
    /** How long a streamed run's events stay available for resuming after it ends. */
    streamRetentionMs: z.number().int().min(0).default(600_000),
    /** Waits between callback attempts (about 3 days in all); attempts = its length + 1. */
    callbackRetryScheduleMs: z
      .array(z.number().int().min(0))
      .default([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000, 36_000_000, 36_000_000, 36_000_000, 36_000_000, 36_000_000]),
    callbackTimeoutMs: z.number().int().positive().default(10_000),
    callbackConcurrency: z.number().int().positive().default(16),
    /** How often the delivery worker looks for due events (it is also woken by each finished run). */
    callbackPollMs: z.number().int().positive().default(1_000),
    /**
     * How long a run stays assigned to the process executing it without a heartbeat (renewed a few
     * times per period while it runs). A run whose lease runs out — its process died — is finished
     * as interrupted (or queued again, if asynchronous) by any process sharing the storage.
     */
    runLeaseMs: z.number().int().min(1_000).default(30_000),
    /** Asynchronous runs (Prefer: respond-async) executed at once; more wait queued. */
    asyncConcurrency: z.number().int().positive().default(4),
    /**
     * Asynchronous runs one key may have queued (429 run_queue_full past it). Keys take turns for
     * the process's `asyncConcurrency` workers however many each has queued.
     */
    asyncQueuedPerKey: z.number().int().min(1).default(1_000),
    /** Test-suite evaluations a process executes at once; more wait queued (they survive restarts). */
    evaluations: z.number().int().positive().default(2),
    /** Case runs one evaluation makes at once (the default and the most a request may ask for). */
    evaluationConcurrency: z.number().int().min(1).max(64).default(4),
    // Evaluations: fair shares and caps (issue 31)
    /** Evaluations one key may have queued at once; past it, 429 evaluation_queue_full (Retry-After). */
    evaluationsQueuedPerKey: z.number().int().min(1).default(10),
    /** Case runs one evaluation may plan, cases × repeat (judge runs not counted); past it, 400 naming the field. */
    evaluationRuns: z.number().int().min(1).default(20_000),
    /** A suite document's size as stored (its JSON); past it, 413 when it is put. */
    suiteBytes: z.number().int().min(1_024).default(8 * MiB),
    /**
     * How long an evaluation keeps its slot while another key's evaluation waits for one: past it,
     * it starts no more case runs, and once those in flight end it goes back to the queue (resuming
     * where it was when its turn comes again). 0: give way after each case run.
     */
    evaluationSliceMs: z.number().int().min(0).default(30_000),
    /**
     * Runs a key may start per minute, for keys without an rpm limit of their own (`genserve keys
     * update --rpm`); counted in fixed UTC minutes in the store, so shared by replicas. 0, the default, disables it. Off by default:
     * runs are bounded by the models themselves (the local engine's lanes and queue answer 429
     * model_busy; providers enforce their own limits), and a per-key default turned ordinary
     * concurrent load into 429s. Set it when keys are handed to parties that must not crowd others out.
     */
    runsPerMinute: z.number().int().min(0).default(0),
    /** Validators kept compiled, by schema hash. */
    validatorCache: z.number().int().positive().default(500),
    /** Worker threads that compile schemas and validate outputs. */
    schemaWorkers: z.number().int().min(1).max(32).default(2),
    /** One validation of an output may take this long; past it the worker is replaced and the run fails (schema_timeout). */
    validationTimeoutMs: z.number().int().min(10).default(2_000),
    /** Compiling one caller's schema may take this long (400 past it). */
    schemaCompileTimeoutMs: z.number().int().min(100).default(10_000),
    /**
     * Compiling one schema's grammar for a local model may take this long; past it the schema is
     * constrained as any JSON and validated after generation (the run records a warning).
     */
    grammarCompileTimeoutMs: z.number().int().min(10).default(2_000),
    /** How long a graceful shutdown waits for in-flight runs. */
    shutdownGraceMs: z.number().int().min(0).default(30_000),
    // Storage quotas and inbox bounds (issue 31)
    /** Built-in inboxes one key may hold (409 quota_exceeded past it). */
    inboxesPerKey: z.number().int().min(1).default(100),
    /** Share links one key may hold that still work (neither revoked nor expired). */
    sharesPerKey: z.number().int().min(1).default(1_000),
    /** Threads one key may hold (deleting one frees its place). */
    threadsPerKey: z.number().int().min(1).default(1_000),
    /** Test suites one key may hold. */
    suitesPerKey: z.number().int().min(1).default(100),
    /** One delivery to a built-in inbox: its body, in bytes (413 past it). */
    inboxEventBytes: z.number().int().min(1_024).default(1 * MiB),
    /** Deliveries one inbox keeps: the newest this many, together at most `inboxBytes` (bodies and headers), none older than `inboxMaxAgeMs`. */
    inboxKeep: z.number().int().min(1).default(100),
    inboxBytes: z.number().int().min(1_024).default(4 * MiB),
    inboxMaxAgeMs: z.number().int().min(1_000).default(24 * 60 * 60 * 1_000),
    /** One page of an inbox's deliveries (`GET /api/v1/inbox/{id}`): bodies up to this many bytes (always at least one delivery). */
    inboxPageBytes: z.number().int().min(1_024).default(1 * MiB),
    // Threads and run lists (issue 31)
    /** Bytes of messages one thread may hold: a turn whose input would pass it is refused (409 thread_full). */
    threadBytes: z.number().int().min(1_024).default(16 * MiB),
    /** Messages one thread may hold (a turn adds two): past it a turn is refused (409 thread_full). */
    threadMessages: z.number().int().min(2).default(2_000),
    /** Bytes of message content one page of GET /threads/{id} carries; a larger message is cut to it. */
    threadPageBytes: z.number().int().min(1_024).default(MiB),
    /** Bytes of a thread's newest messages a run reads for its history at most (the model's window bounds it too). */
    threadHistoryBytes: z.number().int().min(1_024).default(4 * MiB),
    /** Characters of input and output a listed run carries (its schema, output and callback whole up to it); GET /runs/{id} has them whole. */
    runPreviewChars: z.number().int().min(16).max(65_536).default(2_048),
    /** `q=` searches this many characters at the start of each input. */
    runSearchChars: z.number().int().min(16).default(16_384),
    /** Bytes of inputs one `q=` request reads at most (in steps of a few MiB, yielding between them); past it the page ends with a cursor to search on. */
    runSearchBytes: z.number().int().min(MiB).default(64 * MiB),
  })
  .strict();

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
/** 4 or 6 for an IPv4 or IPv6 address, else 0 (no node:net: this file is bundled for the browser too). */
export function ipFamily(address: string): 0 | 4 | 6 {
  if (IPV4.test(address)) return 4;
  if (!address.includes(":") || /[^0-9a-fA-F:.]/.test(address)) return 0;
  try {
    new URL(`http://[${address}]/`);
    return 6;
  } catch {
    return 0;
  }
}

/** Whether `entry` is an IP address or a CIDR block (`10.0.0.0/8`, `fd00::/8`). */
export function isAddressOrCidr(entry: string): boolean {
  const [address, prefix, extra] = entry.split("/");
  const family = ipFamily(address ?? "");
  if (family === 0 || extra !== undefined) return false;
  if (prefix === undefined) return true;
  const bits = /^\d{1,3}$/.test(prefix) ? Number(prefix) : -1;
  return bits >= 0 && bits <= (family === 4 ? 32 : 128);
}

export const serverSchema = z
  .object({
    /**
     * The address callers reach this service at (scheme, host, port, optional path prefix), used for
     * the URLs of built-in inboxes. Default: the address it listens on.
     */
    publicUrl: z
      .url({ protocol: /^https?$/, error: "must be an absolute http or https URL, such as https://genserve.example.com" })
      .refine((u) => !/[?#]/.test(u), "must not have a query or fragment")
      .optional(),
    /**
     * Addresses or CIDR blocks of reverse proxies in front of this server. Only a request whose
     * connection comes from one of them has its client address (per-address sign-in limits, session
     * records) taken from `X-Forwarded-For`; empty (the default), the header is ignored.
     */
    trustedProxies: z.array(z.string().refine(isAddressOrCidr, "must be an IP address or a CIDR block such as 10.0.0.0/8")).default([]),
    /** A client must send its request headers within this time. */
    headersTimeoutMs: z.number().int().min(1_000).default(10_000),
    /** A client must send its whole request (headers and body) within this time; responses are not limited by it. */
    requestTimeoutMs: z.number().int().min(1_000).default(120_000),
    /**
     * An idle kept-alive connection is closed after this long. Longer than the idle timeouts of
     * common proxies and clients (60 s), so the server is never the side that closes a connection
     * a client is about to reuse (that client's request would fail with "other side closed").
     */
    keepAliveTimeoutMs: z.number().int().min(1_000).default(65_000),
  })
  .strict()
  .refine((s) => s.headersTimeoutMs <= s.requestTimeoutMs, { path: ["headersTimeoutMs"], message: "must not be longer than requestTimeoutMs" });

export const databaseSchema = z
  .object({
    /** postgres://… selects PostgreSQL (DATABASE_URL overrides it); absent, the embedded SQLite file in the data directory. */
    url: z
      .string()
      .regex(/^postgres(ql)?:\/\//, "must be a postgres:// or postgresql:// URL")
      .optional(),
    pool: z
      .object({
        max: z.number().int().min(1).max(500).default(10),
        idleTimeoutMs: z.number().int().min(0).default(30_000),
        connectionTimeoutMs: z.number().int().min(100).default(5_000),
      })
      .strict()
      .default({ max: 10, idleTimeoutMs: 30_000, connectionTimeoutMs: 5_000 }),
    /**
     * With PostgreSQL, a streamed run's events are written to the database in batches gathered over
     * this long, so that a client can resume on any replica; it bounds how far behind a follower on
     * another replica is.
     */
    streamFlushMs: z.number().int().min(1).max(5_000).default(50),
  })
  .strict();

export const observabilitySchema = z
  .object({
    /**
     * GET /metrics answers admin keys (Api-Key) and, when set, a scraper sending
     * `Authorization: Bearer <metricsToken>` (use ${ENV} substitution; at least 16 characters).
     */
    metricsToken: z.string().min(16, "must be at least 16 characters").optional(),
    traces: z
      .object({
        /** An OTLP/HTTP traces endpoint (e.g. http://collector:4318/v1/traces); absent, no traces are exported. */
        endpoint: z.url({ protocol: /^https?$/, error: "must be an http or https URL" }).optional(),
        /** Headers sent with each export (an ingest token, say). */
        headers: z.record(z.string(), z.string()).default({}),
        serviceName: z.string().min(1).default("genserve"),
        /** Fraction of runs without an incoming sampled `traceparent` that are traced. */
        sampleRatio: z.number().min(0).max(1).default(1),
        /** How long finished spans wait to be sent in a batch. */
        exportDelayMs: z.number().int().min(10).max(60_000).default(2_000),
      })
      .strict()
      .default({ headers: {}, serviceName: "genserve", sampleRatio: 1, exportDelayMs: 2_000 }),
  })
  .strict();

export const ROLES = ["admin", "editor", "viewer"] as const;
export type Role = (typeof ROLES)[number];

const MINUTE = 60_000;

export const authSchema = z
  .object({
    /**
     * Sign-in with an OpenID Connect provider (authorization code with PKCE). The provider's
     * redirect URI is `<server.publicUrl>/auth/callback`.
     */
    oidc: z
      .object({
        issuer: z.url({ protocol: /^https?$/, error: "must be the provider's issuer URL" }),
        clientId: z.string().min(1),
        clientSecret: z.string().min(1),
        /** What the sign-in button says: "Sign in with <name>". Default: the issuer's host. */
        name: z.string().min(1).max(60).optional(),
        scopes: z.array(z.string().min(1)).default(["openid", "email", "profile"]),
        /** The ID token claim listing the person's groups (e.g. `groups`, `roles`). */
        groupsClaim: z.string().min(1).optional(),
        /** Group → role; the highest role of a person's groups wins, at every sign-in. */
        roles: z.record(z.string(), z.enum(ROLES)).default({}),
        /**
         * The role of a person none of whose groups is in `roles`. Set, it also lets anyone the
         * provider accepts become a person on first sign-in (on purpose: a public provider accepts
         * everyone). Absent while `roles` is set: such a person is refused.
         */
        defaultRole: z.enum(ROLES).optional(),
        /**
         * Email domains whose people may become genserve people on first sign-in (as viewers, or their
         * groups' role), checked against a verified email (and Google's `hd` claim when sent). With
         * neither this, `defaultRole` nor a matching group, only people created beforehand
         * (`genserve users create`) sign in.
         */
        allowedDomains: z.array(z.string().regex(/^[a-z0-9.-]+\.[a-z]{2,}$/i, "must be a domain such as example.com")).default([]),
      })
      .strict()
      .optional(),
    /** A session unused this long ends. */
    sessionIdleMs: z.number().int().min(MINUTE).default(8 * 60 * MINUTE),
    /** A session ends this long after sign-in, however used. */
    sessionMaxMs: z.number().int().min(MINUTE).default(7 * 24 * 60 * MINUTE),
    /** Failed password sign-ins allowed per email, and per client address, in each window. */
    passwordAttemptsPerEmail: z.number().int().min(1).default(5),
    passwordAttemptsPerAddress: z.number().int().min(1).default(50),
    passwordWindowMs: z.number().int().min(MINUTE).default(15 * MINUTE),
  })
  .strict()
  .refine((a) => a.sessionIdleMs <= a.sessionMaxMs, { path: ["sessionIdleMs"], message: "must not be longer than sessionMaxMs" });

export const securitySchema = z
  .object({
    /**
     * The 32-byte key (base64 or hex) that seals stored callback signing secrets (AES-256-GCM), kept
     * outside the database: `{file: PATH}` (relative to this file) or `{env: NAME}`. Absent: with
     * SQLite a key file generated in the data directory; with PostgreSQL it must be set.
     */
    secretsKey: z.union([z.object({ file: z.string().min(1) }).strict(), z.object({ env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be an environment variable's name") }).strict()]).optional(),
  })
  .strict();

/** A section left empty in YAML (`server:` with every setting commented out) is null: its defaults apply. */
const section = <T extends z.ZodType>(schema: T) => z.preprocess((value) => (value === null ? undefined : value), schema);

const slugKeyed = <T extends z.ZodType>(value: T) => section(z.record(z.string().regex(SLUG, slugMessage), value).default({}));

export const fileConfigSchema = z
  .object({
    models: slugKeyed(modelSchema),
    workflows: slugKeyed(workflowSchema),
    contexts: slugKeyed(contextSchema),
    network: section(z.object({ allowPrivate: z.boolean().default(false) }).strict().default({ allowPrivate: false })),
    server: section(serverSchema.default(serverSchema.parse({}))),
    database: section(databaseSchema.default(databaseSchema.parse({}))),
    observability: section(observabilitySchema.default(observabilitySchema.parse({}))),
    limits: section(limitsSchema.default(limitsSchema.parse({}))),
    auth: section(authSchema.default(authSchema.parse({}))),
    security: section(securitySchema.default({})),
  })
  .strict();

export type FileConfig = z.infer<typeof fileConfigSchema>;

export const DEFAULT_LIMITS = limitsSchema.parse({});
export type Limits = z.infer<typeof limitsSchema>;
export type ServerSettings = z.infer<typeof serverSchema>;
export type DatabaseSettings = z.infer<typeof databaseSchema>;
export type ObservabilitySettings = z.infer<typeof observabilitySchema>;
export type AuthSettings = z.infer<typeof authSchema>;
