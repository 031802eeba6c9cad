import type { Store } from "../store/types";

const INBOX_PATH = /^\/api\/v1\/inbox\/([A-Za-z0-9_-]+)$/;

/**
 * Whether a callback URL is the service's own built-in inbox: an inbox that exists, addressed by
 * the host it was created under. Such URLs may use loopback; nothing else private is allowed.
 */
export async function isOwnInbox(store: Store, url: URL): Promise<boolean> {
  const id = INBOX_PATH.exec(url.pathname)?.[1];
  if (!id) return false;
  const inbox = await store.inboxes.get(id);
  return inbox !== null && inbox.host === url.host;
}
