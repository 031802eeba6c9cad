"use client";

import { useEffect, useState } from "react";
import type { ApiClient } from "@/lib/client/api";

const STORAGE_KEY = "genserve.inbox";

/** The inbox this browser last made for a key (by the key's first characters, as listings show it). */
function remembered(apiKey: string): { id: string; url: string } | null {
  try {
    const all = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? "{}") as Record<string, { id?: unknown; url?: unknown }>;
    const found = all[apiKey.slice(0, 10)];
    return typeof found?.id === "string" && typeof found.url === "string" ? { id: found.id, url: found.url } : null;
  } catch {
    return null;
  }
}

function remember(apiKey: string, inbox: { id: string; url: string }): void {
  try {
    const all = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? "{}") as Record<string, unknown>;
    localStorage.setItem(STORAGE_KEY, JSON.stringify({ ...all, [apiKey.slice(0, 10)]: inbox }));
  } catch {
    // Storage full or refused: a new inbox is made next time.
  }
}

/**
 * A built-in inbox for this page's callbacks; `onCreated` gets its URL (to pre-fill the callback).
 * The inbox made for this key before is used again while it exists (a key may hold only
 * `limits.inboxesPerKey` of them; an inbox keeps its newest deliveries), else a new one is made.
 */
export function useInbox(client: ApiClient | null, apiKey: string, onCreated: (url: string) => void) {
  const [inbox, setInbox] = useState<{ id: string; url: string } | null>(null);
  useEffect(() => {
    if (!client) return;
    let live = true;
    const before = remembered(apiKey);
    const reused = before
      ? client.getInbox(before.id, undefined, { limit: 1 }).then(
          (found) => ({ id: found.id, url: found.url }),
          () => null,
        )
      : Promise.resolve(null);
    reused
      .then(async (found) => {
        if (found) return found;
        const created = await client.createInbox();
        remember(apiKey, created);
        return created;
      })
      .then((ready) => {
        if (!live) return;
        setInbox(ready);
        onCreated(ready.url);
      })
      .catch(() => undefined);
    return () => void (live = false);
    // Found or created once per client; onCreated is read when the inbox arrives.
  }, [client, apiKey]);
  return inbox;
}
