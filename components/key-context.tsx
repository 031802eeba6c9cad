"use client";

import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from "react";
import { createApiClient, type ApiClient } from "@/lib/client/api";
import { switchProject as switchSessionProject } from "@/lib/client/members-client";
import { currentSession, endSession, signInWithKey, signInWithPassword, type SessionView } from "@/lib/client/sign-in-client";

/** Where earlier releases kept the pasted key; removed on sight (the browser keeps no key now). */
const LEGACY_STORAGE_KEY = "genserve.apiKey";

interface KeyState {
  /**
   * Who is signed in, as a stable string for cache keys (the key the session acts as); null until
   * the session was read, "" when signed out. Never a key itself.
   */
  apiKey: string | null;
  client: ApiClient | null;
  /** The session: the person (if any), the key they act as, the CSRF token. */
  session: SessionView | null;
  /** Exchanges an API key for a session cookie (the key is not kept). Rejects with the API's error. */
  signIn(key: string): Promise<void>;
  signInWithPassword(email: string, password: string): Promise<void>;
  /**
   * Ends this session (`everywhere`: all of the person's), waiting for the server: the page shows
   * signed out only once the server ended it; otherwise `signOutError` says why and the person stays.
   */
  signOut(message?: string, options?: { everywhere?: boolean }): Promise<void>;
  /**
   * Acts in another of the person's projects (by slug): the session's key changes, and with it
   * `apiKey`, so every cached query (keyed by it) is read again for the new project.
   */
  switchProject(slug: string): Promise<void>;
  /** Why the last sign-out failed (the session is still live), or null. */
  signOutError: string | null;
  /** Why the last sign-out happened (e.g. the key was revoked). */
  notice: string | null;
}

const KeyContext = createContext<KeyState | null>(null);

/**
 * The signed-in browser: an HttpOnly session cookie the server set (no script can read it, and no
 * key is stored in the browser), described by GET /api/v1/session, whose CSRF token the client
 * sends with every change.
 */
export function KeyProvider({ children }: { children: ReactNode }) {
  const [session, setSession] = useState<SessionView | null | undefined>(undefined);
  const [notice, setNotice] = useState<string | null>(null);
  const load = useCallback(async () => {
    try {
      setSession(await currentSession());
    } catch (error) {
      setNotice(`Could not read the session: ${(error as Error).message}`);
      setSession(null);
    }
  }, []);
  useEffect(() => {
    sessionStorage.removeItem(LEGACY_STORAGE_KEY);
    localStorage.removeItem(LEGACY_STORAGE_KEY);
    void load();
  }, [load]);
  const signedIn = useCallback(async () => {
    setNotice(null);
    await load();
    focusPageHeading();
  }, [load]);
  const signIn = useCallback(async (key: string) => (await signInWithKey(key), signedIn()), [signedIn]);
  const withPassword = useCallback(async (email: string, password: string) => (await signInWithPassword(email, password), signedIn()), [signedIn]);
  const [signOutError, setSignOutError] = useState<string | null>(null);
  const signOut = useCallback(
    async (message?: string, options: { everywhere?: boolean } = {}) => {
      setSignOutError(null);
      const csrf = session?.csrfToken;
      if (csrf) {
        try {
          await endSession(csrf, options.everywhere);
        } catch (error) {
          setSignOutError(`Could not sign out: ${(error as Error).message}`);
          return;
        }
      }
      setNotice(message ?? null);
      setSession(null);
    },
    [session],
  );
  const switchProject = useCallback(
    async (slug: string) => {
      if (!session?.csrfToken) return;
      await switchSessionProject(session.csrfToken, slug);
      await load();
    },
    [session, load],
  );
  const apiKey = session === undefined ? null : session ? session.keyId : "";
  const csrfToken = session?.csrfToken ?? null;
  const client = useMemo(() => (csrfToken ? createApiClient({ csrfToken }) : null), [csrfToken]);
  const value = useMemo(
    () => ({ apiKey, client, session: session ?? null, signIn, signInWithPassword: withPassword, signOut, switchProject, signOutError, notice }),
    [apiKey, client, session, signIn, withPassword, signOut, switchProject, signOutError, notice],
  );
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
