import "server-only";
import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { GenserveError } from "../errors";
import type { InboxBounds, InboxRecord, Store, StoredInboxEvent } from "../store/store-types";
import { inboxUrl } from "./own-inbox";

/**
 * The built-in callback receivers: created by a key (an unguessable URL under the public address),
 * posted to by anyone holding the URL (each delivery's signature checked against the key's signing
 * secrets), read a page at a time by the key that created them.
 */
export class InboxService {
  constructor(
    private readonly store: Store,
    /** Where callers reach the service (server.publicUrl): inbox URLs are made from it, never from a request's Host. */
    private readonly publicUrl: string,
  ) {}

  urlOf(id: string): string {
    return inboxUrl(this.publicUrl, id);
  }

  /** A new inbox of the key (at most `limit` per key, else quota_exceeded). */
  async create(keyId: string, limit: number): Promise<{ id: string; url: string }> {
    const id = `inb_${randomBytes(18).toString("base64url")}`;
    await this.store.inboxes.create({ id, keyId, host: new URL(this.publicUrl).host, createdAt: new Date().toISOString() }, limit);
    return { id, url: this.urlOf(id) };
  }

  /** The inbox if it is the key's, else not_found (another key's inbox is a missing one). */
  async owned(keyId: string, id: string): Promise<InboxRecord> {
    const inbox = await this.store.inboxes.get(id);
    if (!inbox || inbox.keyId !== keyId) throw new GenserveError("not_found", { detail: "No such inbox for this key." });
    return inbox;
  }

  /** One page of its deliveries, newest first. */
  events(id: string, page: { before?: number; limit: number; maxBytes: number }): Promise<{ events: StoredInboxEvent[]; next: number | null }> {
    return this.store.inboxes.events(id, page);
  }

  /** Stores a delivery (its body read within bounds by the caller), with whether its signature verified; the inbox keeps its newest within `bounds`. */
  async receive(id: string, readBody: () => Promise<string>, requestHeaders: Headers, bounds: InboxBounds): Promise<void> {
    const inbox = await this.store.inboxes.get(id);
    if (!inbox) throw new GenserveError("not_found", { detail: "No such inbox." });
    const body = await readBody();
    const headers = Object.fromEntries([...requestHeaders.entries()].filter(([name]) => !/^(cookie|authorization|api-key)$/i.test(name)));
    const secrets = await this.store.keys.secrets(inbox.keyId);
    const candidates = [secrets?.current, secrets?.previous].filter((s): s is string => Boolean(s));
    const verified = candidates.some((secret) => {
      try {
        new Webhook(secret).verify(body, headers);
        return true;
      } catch {
        return false;
      }
    });
    await this.store.inboxes.receive(inbox.id, { receivedAt: new Date().toISOString(), headers, body, verified }, bounds);
  }
}
