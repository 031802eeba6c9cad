/**
 * The playground's side of signing in (browser-safe): the session cookie is set and sent by the
 * browser (HttpOnly: no script reads it); this only asks the server to start, describe or end it.
 */
import type { SessionView } from "../api/session-shapes";
import { ApiError } from "./api";

export type { SessionView } from "../api/session-shapes";

/** What the sign-in page offers (GET /auth/providers). */
export interface SignInOptions {
  oidc: { label: string; loginUrl: string } | null;
  password: boolean;
  key: boolean;
}

async function call<T>(path: string, init: RequestInit = {}): Promise<T> {
  const response = await fetch(path, { credentials: "same-origin", ...init, headers: { ...(init.body ? { "Content-Type": "application/json" } : {}), ...init.headers } });
  const body = (await response.json().catch(() => undefined)) as unknown;
  if (!response.ok) throw ApiError.fromProblem(response.status, body);
  return body as T;
}

/** The signed-in browser's session, or null when it has none (or it ended). */
export async function currentSession(): Promise<SessionView | null> {
  try {
    return await call<SessionView>("/api/v1/session");
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return null;
    throw error;
  }
}

export const signInOptions = () => call<SignInOptions>("/auth/providers");

/** Exchanges an API key for a session: the browser keeps the cookie, never the key. */
export const signInWithKey = (key: string) => call<{ csrfToken: string }>("/auth/key", { method: "POST", body: JSON.stringify({ key }) });

export const signInWithPassword = (email: string, password: string) => call<{ csrfToken: string }>("/auth/password", { method: "POST", body: JSON.stringify({ email, password }) });

/** Ends this session, or with `everywhere` every session of the person. */
export const signOutSession = (csrfToken: string, everywhere = false) =>
  call<{ ended: number }>(`/auth/logout${everywhere ? "?everywhere=1" : ""}`, { method: "POST", headers: { "X-CSRF-Token": csrfToken } });

/**
 * Ends the session as `signOutSession` does, and once more with a fresh CSRF token when the server
 * refused the one held (`csrf_refused`: the page kept a token of an earlier session, say). Resolves
 * once the server ended it (or it had ended already); rejects with the server's error otherwise.
 */
export async function endSession(csrfToken: string, everywhere = false): Promise<void> {
  try {
    await signOutSession(csrfToken, everywhere);
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== "csrf_refused") throw error;
    const fresh = await currentSession();
    if (!fresh?.csrfToken) return; // no session left to end
    await signOutSession(fresh.csrfToken, everywhere);
  }
}
