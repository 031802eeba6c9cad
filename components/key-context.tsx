"use client";

import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from "react";
import { createApiClient, type ApiClient } from "@/lib/client/api";

const STORAGE_KEY = "genserve.apiKey";

interface KeyState {
  /** null until sessionStorage was read; "" when signed out. */
  apiKey: string | null;
  client: ApiClient | null;
  signIn(key: string): void;
  signOut(message?: string): void;
  /** Why the last sign-out happened (e.g. the key was revoked). */
  notice: string | null;
}

const KeyContext = createContext<KeyState | null>(null);

/** The API key lives in this browser tab's session only, and travels only in the Api-Key header. */
export function KeyProvider({ children }: { children: ReactNode }) {
  const [apiKey, setApiKey] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  useEffect(() => setApiKey(sessionStorage.getItem(STORAGE_KEY) ?? ""), []);
  const signIn = useCallback((key: string) => {
    sessionStorage.setItem(STORAGE_KEY, key);
    setNotice(null);
    setApiKey(key);
  }, []);
  const signOut = useCallback((message?: string) => {
    sessionStorage.removeItem(STORAGE_KEY);
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
