import "server-only";
import type { Store } from "../store/store-types";

const INBOX_ID = /^inb_[A-Za-z0-9_-]{1,64}$/;

/** The URL of a built-in inbox under the service's public base URL. */
export function inboxUrl(publicUrl: string, id: string): string {
  return `${publicUrl.replace(/\/+$/, "")}/api/v1/inbox/${id}`;
}

/**
 * Whether a callback URL is the service's own built-in inbox: exactly the public origin (and path
 * prefix) the service was configured with, and an inbox that exists. Only such URLs may use
 * loopback while `network.allowPrivate` is false. The request's Host header plays no part: a
 * caller who could choose it could point the exception at any local port.
 */
export async function isOwnInbox(store: Store, url: URL, publicUrl: string): Promise<boolean> {
  const base = new URL(publicUrl);
  if (url.origin !== base.origin || url.username || url.password || url.search || url.hash) return false;
  const prefix = `${base.pathname.replace(/\/+$/, "")}/api/v1/inbox/`;
  if (!url.pathname.startsWith(prefix)) return false;
  const id = url.pathname.slice(prefix.length);
  if (!INBOX_ID.test(id)) return false;
  return (await store.inboxes.get(id)) !== null;
}
