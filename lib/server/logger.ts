import "server-only";
import pino, { type Logger } from "pino";

/**
 * Credentials that may turn up in text genserve logs (provider error bodies echo them): OpenAI-style
 * keys, genserve's own keys and webhook secrets, bearer tokens, AWS access key ids, and a session
 * cookie or sign-in link quoted in a message.
 */
const SECRET_PATTERNS: [RegExp, string][] = [
  [/\b(?:sk|pk|rk)-[A-Za-z0-9_-]{10,}/g, "[redacted]"],
  [/\bgs_[A-Za-z0-9_-]{20,}/g, "[redacted]"],
  [/\bwhsec_[A-Za-z0-9+/=]{10,}/g, "[redacted]"],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, "$1 [redacted]"],
  [/\bAKIA[0-9A-Z]{16}\b/g, "[redacted]"],
  [/\b(genserve_session|genserve_oidc)=[^;\s]+/g, "$1=[redacted]"],
  [/(\/auth\/(?:link|invite)\/)[A-Za-z0-9_-]{20,}/g, "$1[redacted]"],
];

/** Replaces configured secrets and anything shaped like a credential in a piece of text. */
export function scrubSecrets(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 6 && out.includes(secret)) out = out.split(secret).join("[redacted]");
  for (const [pattern, replacement] of SECRET_PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

/** Every string in a log record, scrubbed (bounded: records are small, nesting is cut at 8 levels). */
function scrubRecord(value: unknown, secrets: readonly string[], depth = 0): unknown {
  if (typeof value === "string") return scrubSecrets(value, secrets);
  if (value === null || typeof value !== "object" || depth > 8) return value;
  if (Array.isArray(value)) return value.map((v) => scrubRecord(v, secrets, depth + 1));
  if (value instanceof Error) return { name: value.name, message: scrubSecrets(value.message, secrets) };
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = scrubRecord(v, secrets, depth + 1);
  return out;
}

export interface LoggerOptions {
  /** Configured secrets (providers' API keys and header values): never written to the log. */
  secrets?: readonly string[];
}

/**
 * Structured JSON logs on stdout. Keys and secrets are never logged on purpose; as a second line of
 * defence, these paths are redacted and every string is scrubbed of configured secrets and of
 * anything shaped like a credential (a provider's error body may quote one).
 */
export function createLogger(level: string, destination?: pino.DestinationStream, options: LoggerOptions = {}): Logger {
  const secrets = [...new Set(options.secrets ?? [])].filter((s) => s.length >= 6).sort((a, b) => b.length - a.length);
  return pino(
    {
      level,
      base: { service: "genserve" },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: [
          ...["apiKey", "key", "headers", "authorization", "cookie", "password", "token", "csrfToken", "clientSecret"].flatMap((p) => [p, `*.${p}`]),
          "req.headers",
        ],
        censor: "[redacted]",
      },
      formatters: {
        level: (label) => ({ level: label }),
        log: (record) => scrubRecord(record, secrets) as Record<string, unknown>,
      },
      hooks: {
        logMethod(args, method) {
          // The message string too (it is usually a constant).
          const last = args.length - 1;
          if (typeof args[last] === "string") args[last] = scrubSecrets(args[last] as string, secrets);
          method.apply(this, args as Parameters<typeof method>);
        },
      },
    },
    destination,
  );
}
