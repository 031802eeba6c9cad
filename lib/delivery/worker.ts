import type { Logger } from "pino";
import { Webhook } from "standardwebhooks";
import { guardedLookup, isLoopbackAddress, isPrivateAddress } from "../net/address-guard";
import type { EventRecord, Store } from "../store/types";
import { isOwnInbox } from "./own-inbox";
import { postEvent } from "./send";

export interface DeliveryOptions {
  allowPrivate: boolean;
  /** Waits before each retry; the number of attempts is one more than its length. */
  scheduleMs: readonly number[];
  timeoutMs: number;
  concurrency: number;
  pollMs: number;
}

/**
 * Sends queued callback events (the outbox) with Standard Webhooks signatures. At least once: an
 * event leaves the outbox only when a receiver answered 2xx (or 410 Gone, or the schedule ran out:
 * `dead`). Everything due is picked up again after a restart.
 */
export class DeliveryWorker {
  private timer: NodeJS.Timeout | null = null;
  private readonly inflight = new Map<string, Promise<void>>();
  private running = false;
  private again = false;

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    private readonly options: DeliveryOptions,
    private readonly now: () => Date = () => new Date(),
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.kick(), this.options.pollMs);
    this.timer.unref();
    this.kick();
  }

  /** Looks for due events now (a run just queued one). */
  kick(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void this.tick()
      .catch((error: unknown) => this.log.error({ err: { message: (error as Error).message } }, "delivery loop failed"))
      .finally(() => {
        this.running = false;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  async stop(graceMs: number): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await Promise.race([Promise.allSettled([...this.inflight.values()]), new Promise((r) => setTimeout(r, graceMs).unref())]);
  }

  private async tick(): Promise<void> {
    const free = this.options.concurrency - this.inflight.size;
    if (free <= 0) return;
    const due = (await this.store.events.due(this.now().toISOString(), free + this.inflight.size)).filter((e) => !this.inflight.has(e.id)).slice(0, free);
    for (const event of due) {
      const work = this.deliver(event).finally(() => {
        this.inflight.delete(event.id);
        this.kick();
      });
      this.inflight.set(event.id, work);
    }
  }

  private async deliver(event: EventRecord): Promise<void> {
    const log = this.log.child({ runId: event.runId, eventId: event.id });
    const url = new URL(event.url);
    const self = await isOwnInbox(this.store, url);
    const allow = (address: string) => this.options.allowPrivate || !isPrivateAddress(address) || (self && isLoopbackAddress(address));
    const headers = { "content-type": "application/json", ...event.headers, ...(await this.sign(event)) };
    const result = await postEvent(url, headers, event.payload, { timeoutMs: this.options.timeoutMs, lookup: guardedLookup(allow) });

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
    );
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
      signatures.push(new Webhook(secrets.current).sign(event.id, at, event.payload));
      if (secrets.previous && secrets.previousUntil && Date.parse(secrets.previousUntil) > at.getTime()) {
        signatures.push(new Webhook(secrets.previous).sign(event.id, at, event.payload));
      }
    }
    return { "webhook-id": event.id, "webhook-timestamp": String(Math.floor(at.getTime() / 1000)), "webhook-signature": signatures.join(" ") };
  }
}

/** ±10% so that many failed events do not retry in lockstep. */
function jitter(ms: number): number {
  return Math.round(ms * (0.9 + Math.random() * 0.2));
}
