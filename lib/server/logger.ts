import pino, { type Logger } from "pino";

/** Structured JSON logs on stdout. Keys and secrets are never logged; these paths are redacted anyway. */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: "genserve" },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: ["apiKey", "key", "headers", "*.apiKey", "*.key", "*.headers", "req.headers"], censor: "[redacted]" },
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
}
