/**
 * Checks a callback genserve delivered: the Standard Webhooks signature
 * (`webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, the key being the base64
 * after `whsec_` of your key's webhook secret) and the timestamp's age, with Web Crypto so it runs
 * in Node, browsers, edge runtimes and Bun alike. Browser-safe.
 */
import { GenserveSignatureError } from "./api-error";
import type { RunMetadata } from "./operations";

/** A callback event's body. */
export interface CallbackEvent<T = unknown> {
  id: string;
  type: "run.succeeded" | "run.failed" | "run.cancelled" | (string & {});
  createdAt: string;
  data: {
    runId: string;
    operation: string;
    workflowSlug: string;
    customProperties?: Record<string, unknown>;
    object?: T;
    text?: string;
    error?: { code: string; detail: string; status: number; [member: string]: unknown };
    metadata: RunMetadata;
    [member: string]: unknown;
  };
}

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

const header = (headers: HeaderSource, name: string): string | undefined => {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : value;
};

const fromBase64 = (text: string): Uint8Array<ArrayBuffer> => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
const toBase64 = (bytes: ArrayBuffer): string => btoa(String.fromCharCode(...new Uint8Array(bytes)));

/** Compares without leaving by the first difference (a timing side channel). */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * Verifies a delivered callback and returns its event; throws `GenserveSignatureError` when the
 * signature does not match (any of the listed ones, as during a secret rotation) or the timestamp
 * is more than `toleranceSeconds` (default 300) away from now. Pass the body exactly as received.
 *
 * @example
 * ```ts
 * // app/api/genserve-events/route.ts (Next.js)
 * export async function POST(request: Request) {
 *   const event = await verifyCallback(await request.text(), request.headers, process.env.GENSERVE_WEBHOOK_SECRET!);
 *   if (event.type === "run.succeeded") await save(event.data.runId, event.data.object);
 *   return new Response(null, { status: 204 });
 * }
 * ```
 */
export async function verifyCallback<T = unknown>(
  body: string | Uint8Array,
  headers: HeaderSource,
  secret: string,
  options: { toleranceSeconds?: number; now?: Date } = {},
): Promise<CallbackEvent<T>> {
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!id || !timestamp || !signatures) throw new GenserveSignatureError("The webhook-id, webhook-timestamp and webhook-signature headers are required.");
  if (!/^\d+$/.test(timestamp)) throw new GenserveSignatureError("webhook-timestamp is not a number of seconds.");
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? 300)) throw new GenserveSignatureError("webhook-timestamp is too far from now (a replayed or delayed message).");

  const text = typeof body === "string" ? body : new TextDecoder().decode(body);
  const keyBytes = fromBase64(secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret);
  const key = await crypto.subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const expected = toBase64(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${id}.${timestamp}.${text}`)));
  const matched = signatures.split(" ").some((entry) => {
    const [version, signature] = entry.split(",", 2);
    return version === "v1" && signature !== undefined && sameText(signature, expected);
  });
  if (!matched) throw new GenserveSignatureError("No signature matches: the body was changed, or the secret is not this key's.");
  return JSON.parse(text) as CallbackEvent<T>;
}
