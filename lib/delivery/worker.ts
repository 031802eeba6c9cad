import "server-only";
import { createHmac } from "node:crypto";
import type { Logger } from "pino";
import type { Tracing, TraceSpan } from "../observability/tracing";
import type { EventRecord, NewEvent, Store } from "../store/store-types";
import { LeasedWorker } from "../workers/leased-worker";
import { callbackAddressFilter, refusesLiteral } from "./address-policy";
import { postEvent, ReceiverConnections, type SendResult } from "./send";

export interface DeliveryOptions {
  allowPrivate: boolean;
  /** Waits before each retry; the number of attempts is one more than its length. */
  scheduleMs: readonly number[];
  timeoutMs: number;
  concurrency: number;
  pollMs: number;
  /** The service's public base URL: callbacks to its own built-in inboxes there may use loopback. */
  publicUrl: string;
  /** This process, as the holder of the events it is delivering (several processes may share the outbox). */
  owner: string;
  /** Told of each recorded attempt (metrics). */
  onAttempt?: (outcome: "delivered" | "failed" | "dead") => void;
  /** Each attempt is a span in the trace of the run whose event it delivers. */
  tracing?: Tracing;
}

/**
 * A slot to deliver one event the moment its transaction commits, without looking for it in the
 * outbox: the event is written already held by this process until `leaseUntil`, so no other process
 * takes it meanwhile, and is handed over with `dispatch` once stored (or the slot given back with
 * `release` when it was not stored). Whoever holds a ticket calls exactly one of the two.
 */
export interface DeliveryTicket {
  readonly leaseUntil: string;
  dispatch(event: NewEvent): void;
  release(): void;
}

/** What the stages that queue events need from delivery (`queueEvent` uses it). */
export interface EventDispatch {
  /** A ticket to deliver an event at once, or null when every slot is busy (the event is queued free, for the next pass). */
  hold(): DeliveryTicket | null;
  /** Look for due events soon (one was queued free). */
  kick(): void;
}

/**
 * Stores an event with what it tells of — `write` is the one transaction that stores both and says
 * whether it did — and hands it to delivery: held for this process when a slot is free (written
 * with the ticket's lease, delivered once stored, with no claim), else queued free and the delivery
 * loop told. Returns what `write` returned.
 */
export async function queueEvent(delivery: EventDispatch | undefined, event: NewEvent | undefined, write: (event: NewEvent | undefined) => Promise<boolean>): Promise<boolean> {
  const ticket = event ? (delivery?.hold() ?? null) : null;
  const queued = event && ticket ? { ...event, leaseUntil: ticket.leaseUntil } : event;
  let stored = false;
  try {
    stored = await write(queued);
  } finally {
    if (!stored || !queued) ticket?.release();
    else if (ticket) ticket.dispatch(queued);
    else delivery?.kick();
  }
  return stored;
}

/**
 * An event is claimed for this long: enough for its attempt (the time-out) and recording it. An
 * attempt that cannot even be recorded (storage trouble) leaves the event alone until then.
 */
const LEASE_MARGIN_MS = 30_000;

/** An event this process holds, and until when. */
interface Held {
  event: EventRecord;
  heldUntil: string;
}

/**
 * Sends queued callback events (the outbox) with Standard Webhooks signatures. At least once: an
 * event leaves the outbox only when a receiver answered 2xx (or 410 Gone, or the schedule ran out:
 * `dead`). Everything due is picked up again after a restart. Processes sharing the outbox claim
 * events under a lease, so each attempt is made by one of them.
 */
export class DeliveryWorker implements EventDispatch {
  private readonly worker: LeasedWorker<Held>;
  private readonly connections = new ReceiverConnections();
  private started = false;

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    private readonly options: DeliveryOptions,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.worker = new LeasedWorker<Held>({
      concurrency: options.concurrency,
      pollMs: options.pollMs,
      // A slot is free: look again only if the outbox may hold more than the last pass took
      // (events that were queued free while every slot was busy); the timer finds the rest.
      refill: "if-saturated",
      id: ({ event }) => event.id,
      claim: async (free) => {
        const now = this.now();
        const until = this.leaseUntil(now);
        const due = await this.store.events.claimDue(now.toISOString(), free, { owner: this.options.owner, until });
        return due.map((event) => ({ event, heldUntil: until }));
      },
      work: ({ event, heldUntil }) =>
        this.deliver(event, heldUntil).catch((error: unknown) => {
          // Even the failure could not be recorded (storage trouble): the event stays claimed until
          // its lease runs out, instead of being tried again at once without a trace.
          this.log.error({ runId: event.runId, eventId: event.id, err: { message: (error as Error).message } }, "could not record a callback attempt");
        }),
      onError: (error) => this.log.error({ err: { message: (error as Error).message } }, "delivery loop failed"),
    });
  }

  /** Starts delivering; with storage this process owns alone (`exclusive`), events a dead process held are freed first. */
  start(options: { exclusive?: boolean } = {}): void {
    if (this.started) return;
    this.started = true;
    if (options.exclusive) {
      void this.store.events
        .releaseLeases()
        .catch((error: unknown) => this.log.error({ err: { message: (error as Error).message } }, "could not free held events"))
        .finally(() => this.kick());
    }
    this.worker.start();
  }

  /**
   * Looks for due events soon (a run just queued one). The pass starts on a later turn of the event
   * loop, never inside the caller's: however deliveries end, the loop yields between passes.
   */
  kick(): void {
    this.worker.kick();
  }

  /** Stops looking for events and waits (up to `graceMs`) for attempts in flight; storage may close after. */
  async stop(graceMs: number): Promise<void> {
    await this.worker.drain(graceMs);
    this.connections.close();
  }

  hold(): DeliveryTicket | null {
    const slot = this.worker.reserve();
    if (!slot) return null;
    let used = false;
    const leaseUntil = this.leaseUntil(this.now());
    const use = () => {
      if (used) throw new Error("a delivery ticket is used once");
      used = true;
    };
    return {
      leaseUntil,
      dispatch: (event) => {
        use();
        // On a later turn of the event loop: the run answers its caller first, and the events of
        // runs that end together go out together. The slot stays reserved until then. Stopping
        // meanwhile: the event stays held until its lease runs out, then any process takes it.
        setImmediate(() => slot.launch({ event: { ...event, status: "pending", attempts: 0 }, heldUntil: leaseUntil }));
      },
      release: () => {
        use();
        slot.release();
      },
    };
  }

  private leaseUntil(now: Date): string {
    return new Date(now.getTime() + this.options.timeoutMs + LEASE_MARGIN_MS).toISOString();
  }

  private async deliver(event: EventRecord, heldUntil: string): Promise<void> {
    const traceId = event.traceparent?.split("-")[1];
    const log = this.log.child({ runId: event.runId, eventId: event.id, ...(traceId && { traceId }) });
    const span = this.options.tracing?.start("callback delivery", event.traceparent, { "http.request.method": "POST", "genserve.run.id": event.runId, "genserve.event.id": event.id, "genserve.delivery.attempt": event.attempts + 1 }, "client");
    try {
      await this.attempt(event, heldUntil, log, span);
    } finally {
      span?.end();
    }
  }

  private async attempt(event: EventRecord, heldUntil: string, log: Logger, span: TraceSpan | undefined): Promise<void> {
    let result: SendResult;
    try {
      const url = new URL(event.url);
      span?.set({ "server.address": url.hostname, "url.scheme": url.protocol.replace(":", "") });
      const allowed = await callbackAddressFilter(this.store, url, this.options);
      if (refusesLiteral(url, allowed)) {
        result = { error: "refused: the URL names a private address", refused: true, durationMs: 0 };
      } else {
        const headers = { "content-type": "application/json", ...event.headers, ...(await this.sign(event)) };
        result = await postEvent(url, headers, event.payload, { timeoutMs: this.options.timeoutMs, agent: this.connections.agent(url, allowed) });
      }
    } catch (error) {
      // Anything that fails before or while sending (a header Node refuses, a URL that no longer
      // parses) is a failed attempt like any other: recorded, and retried on the schedule.
      result = { error: `could not send: ${(error as Error).message ?? String(error)}`.slice(0, 500), durationMs: 0 };
    }

    const attempt = event.attempts + 1;
    const at = this.now();
    const ok = "statusCode" in result && result.statusCode >= 200 && result.statusCode < 300;
    const gone = "statusCode" in result && result.statusCode === 410;
    const wait = this.options.scheduleMs[attempt - 1];
    const status: EventRecord["status"] = ok ? "delivered" : gone || wait === undefined ? "dead" : "pending";
    const nextAttemptAt = status === "pending" ? new Date(at.getTime() + jitter(wait!)).toISOString() : null;
    await this.store.events.recordAttempt(
      event.id,
      {
        attemptedAt: at.toISOString(),
        statusCode: "statusCode" in result ? result.statusCode : null,
        error: "error" in result ? result.error : null,
        durationMs: result.durationMs,
        nextAttemptAt,
      },
      status,
      heldUntil,
    );
    this.options.onAttempt?.(status === "pending" ? "failed" : status);
    if ("statusCode" in result) span?.set({ "http.response.status_code": result.statusCode });
    if (!ok) span?.fail(status === "dead" ? "delivery_dead" : "delivery_failed", "statusCode" in result ? `HTTP ${result.statusCode}` : result.error);
    const outcome = "statusCode" in result ? { statusCode: result.statusCode } : { error: result.error };
    if (ok) log.info({ attempt, ...outcome, durationMs: result.durationMs }, "callback delivered");
    else log.warn({ attempt, ...outcome, status, nextAttemptAt }, status === "dead" ? "callback given up" : "callback failed; will retry");
  }

  /** Standard Webhooks headers; during a secret rotation both secrets sign. */
  private async sign(event: EventRecord): Promise<Record<string, string>> {
    const secrets = await this.store.keys.secrets(event.keyId);
    const at = this.now();
    const signatures: string[] = [];
    if (secrets) {
      signatures.push(webhookSignature(secrets.current, event.id, at, event.payload));
      if (secrets.previous && secrets.previousUntil && Date.parse(secrets.previousUntil) > at.getTime()) {
        signatures.push(webhookSignature(secrets.previous, event.id, at, event.payload));
      }
    }
    return { "webhook-id": event.id, "webhook-timestamp": String(Math.floor(at.getTime() / 1000)), "webhook-signature": signatures.join(" ") };
  }
}

/**
 * A Standard Webhooks v1 signature: HMAC-SHA256 of `id.timestamp.body` under the secret (base64
 * after `whsec_`), in base64. Node's HMAC, not the `standardwebhooks` package's JavaScript SHA-256
 * (3 against 16 µs for a 1 KB body, measured); that package verifies these in the tests.
 */
export function webhookSignature(secret: string, id: string, at: Date, payload: string): string {
  const key = Buffer.from(secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret, "base64");
  return `v1,${createHmac("sha256", key).update(`${id}.${Math.floor(at.getTime() / 1000)}.${payload}`).digest("base64")}`;
}

/** ±10% so that many failed events do not retry in lockstep. */
function jitter(ms: number): number {
  return Math.round(ms * (0.9 + Math.random() * 0.2));
}
