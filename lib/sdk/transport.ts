/**
 * How the client sends a request: the base URL, the key and default headers, problem+json answers
 * turned into typed errors, and retries — only of errors the server calls retryable (and of
 * connection failures where sending again cannot run twice), after the server's Retry-After or a
 * growing pause, bounded in count and in wait. Only `fetch`: runs in browsers, Node, Bun and edge
 * runtimes. Browser-safe.
 */
import { errorFromProblem, GenserveApiError, GenserveConnectionError } from "./api-error";

export interface ClientOptions {
  /** Where genserve answers, e.g. `https://genserve.example.com` (or your app's proxy route, `/api/genserve`). */
  baseURL: string;
  /** Sent as `Api-Key`. Leave it out in browsers and call through `genserveProxy` instead. */
  apiKey?: string;
  /** A fetch of your own (tests, instrumentation, a runtime without a global one). */
  fetch?: typeof fetch;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /** Retries of a retryable failure (default 2; 0 turns them off). */
  maxRetries?: number;
  /** The longest wait before one retry, whatever Retry-After says (default 30 s). */
  maxRetryDelayMs?: number;
  /** Told before each retry: the failure and how long the client waits (logging, metrics). */
  onRetry?: (retry: { attempt: number; delayMs: number; error: GenserveApiError; path: string }) => void;
}

export interface SendOptions {
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Whether a connection failure may be retried (the request cannot have started a run twice). */
  safeToResend?: boolean;
}

/** Waits `ms`, or rejects with the signal's reason when it aborts first. */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

export class Transport {
  readonly baseURL: string;
  private readonly fetcher: typeof fetch;
  private readonly maxRetries: number;
  private readonly maxRetryDelayMs: number;

  constructor(private readonly options: ClientOptions) {
    this.baseURL = options.baseURL.replace(/\/+$/, "");
    // Bound late: a global fetch replaced after the client was made (tests, polyfills) is used.
    this.fetcher = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.maxRetries = Math.max(0, options.maxRetries ?? 2);
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 30_000;
  }

  /** Sends once: a successful Response, or a typed error. */
  async sendOnce(method: string, path: string, options: SendOptions = {}): Promise<Response> {
    const headers: Record<string, string> = {
      ...(this.options.apiKey !== undefined && { "Api-Key": this.options.apiKey }),
      ...(options.body !== undefined && { "Content-Type": "application/json" }),
      ...this.options.headers,
      ...options.headers,
    };
    let response: Response;
    try {
      response = await this.fetcher(`${this.baseURL}${path}`, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: options.signal,
      });
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      throw new GenserveConnectionError(`Could not reach genserve at ${this.baseURL}: ${(error as Error)?.message ?? error}`, error);
    }
    if (response.ok) return response;
    const text = await response.text().catch(() => "");
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // Not problem+json (a proxy's page): the text is the detail.
    }
    const error = errorFromProblem(response.status, body, response.headers);
    // A replayed answer (Idempotency-Key) is the same answer however often it is asked for.
    if (response.headers.get("idempotent-replayed") === "true") Object.defineProperty(error, "retryable", { value: false });
    throw error;
  }

  /** Sends, retrying retryable failures within the bounds. */
  async send(method: string, path: string, options: SendOptions = {}): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.sendOnce(method, path, options);
      } catch (error) {
        if (!(error instanceof GenserveApiError) || !error.retryable || attempt >= this.maxRetries) throw error;
        if (error instanceof GenserveConnectionError && !options.safeToResend) throw error;
        const delayMs = this.retryDelay(error, attempt);
        this.options.onRetry?.({ attempt: attempt + 1, delayMs, error, path });
        await pause(delayMs, options.signal);
      }
    }
  }

  /** The server's Retry-After when it gave one, else 0.5 s, 1 s, 2 s…; never more than the bound. */
  retryDelay(error: GenserveApiError, attempt: number): number {
    return Math.min(this.maxRetryDelayMs, error.retryAfterMs ?? 500 * 2 ** attempt);
  }

  async json<T>(method: string, path: string, options: SendOptions = {}): Promise<{ body: T; headers: Headers; status: number }> {
    const response = await this.send(method, path, options);
    return { body: (await response.json()) as T, headers: response.headers, status: response.status };
  }
}
