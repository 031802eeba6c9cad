"use client";

import { useEffect, useState } from "react";
import type { ApiClient } from "@/lib/client/api";

/** A fresh built-in inbox for this page's callbacks; `onCreated` gets its URL (to pre-fill the callback). */
export function useInbox(client: ApiClient | null, onCreated: (url: string) => void) {
  const [inbox, setInbox] = useState<{ id: string; url: string } | null>(null);
  useEffect(() => {
    let live = true;
    client
      ?.createInbox()
      .then((created) => {
        if (!live) return;
        setInbox(created);
        onCreated(created.url);
      })
      .catch(() => undefined);
    return () => void (live = false);
    // Created once per client; onCreated is read when the inbox arrives.
  }, [client]);
  return inbox;
}
