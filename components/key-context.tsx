"use client";

import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from "react";
import { createApiClient, type ApiClient } from "@/lib/client/api";

const STORAGE_KEY = "genserve.apiKey";

interface KeyState {
  /** null until sessionStorage was read; "" when signed out. */
  apiKey: string | null;
  client: ApiClient | null;
  /** `remember`: kept on this device (localStorage, every tab) instead of this tab's session. */
  signIn(key: string, remember?: boolean): void;
  signOut(message?: string): void;
  /** Why the last sign-out happened (e.g. the key was revoked). */
  notice: string | null;
}

const KeyContext = createContext<KeyState | null>(null);

/**
 * The API key lives in this browser tab's session — or, when the person asks to be remembered, on
 * this device for every tab (a risk they are told of: anyone using this browser profile can use
 * it) — and travels only in the Api-Key header.
 */
export function KeyProvider({ children }: { children: ReactNode }) {
  const [apiKey, setApiKey] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  useEffect(() => setApiKey(sessionStorage.getItem(STORAGE_KEY) ?? localStorage.getItem(STORAGE_KEY) ?? ""), []);
  const signIn = useCallback((key: string, remember = false) => {
    sessionStorage.setItem(STORAGE_KEY, key);
    if (remember) localStorage.setItem(STORAGE_KEY, key);
    else localStorage.removeItem(STORAGE_KEY);
    setNotice(null);
    setApiKey(key);
    focusPageHeading();
  }, []);
  const signOut = useCallback((message?: string) => {
    sessionStorage.removeItem(STORAGE_KEY);
    localStorage.removeItem(STORAGE_KEY);
    setNotice(message ?? null);
    setApiKey("");
  }, []);
  const client = useMemo(() => (apiKey ? createApiClient(apiKey) : null), [apiKey]);
  const value = useMemo(() => ({ apiKey, client, signIn, signOut, notice }), [apiKey, client, signIn, signOut, notice]);
  return <KeyContext.Provider value={value}>{children}</KeyContext.Provider>;
}

export function useApiKey(): KeyState {
  const state = useContext(KeyContext);
  if (!state) throw new Error("useApiKey outside KeyProvider");
  return state;
}

/**
 * After sign-in the form that had focus is gone, and focus would fall to <body>: it goes to the
 * heading of the page that replaced it (as after a route change), so the next Tab is the page's
 * first control. The page renders a frame or two later; a few frames are tried.
 */
function focusPageHeading(tries = 30): void {
  requestAnimationFrame(() => {
    const heading = document.querySelector<HTMLElement>("main h1");
    if (heading && !document.getElementById("api-key")) {
      heading.tabIndex = -1;
      heading.focus();
    } else if (tries > 0) focusPageHeading(tries - 1);
  });
}
