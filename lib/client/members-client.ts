/**
 * The members API and project switching as the playground calls them (browser-safe): a signed-in
 * browser's requests, its CSRF token on every change.
 */
import type { Role } from "../domain/roles";
import { ApiError } from "./api";

export interface MemberView {
  userId: string;
  email: string;
  name: string | null;
  role: Role;
  since: string;
  lastActiveAt: string | null;
}

export interface InviteView {
  id: string;
  email: string;
  role: Role;
  createdAt: string;
  expiresAt: string;
}

async function call<T>(path: string, csrfToken: string, init: RequestInit = {}): Promise<T> {
  const response = await fetch(path, {
    credentials: "same-origin",
    ...init,
    headers: { "X-CSRF-Token": csrfToken, ...(init.body ? { "Content-Type": "application/json" } : {}) },
  });
  const body = response.status === 204 ? undefined : ((await response.json().catch(() => undefined)) as unknown);
  if (!response.ok) throw ApiError.fromProblem(response.status, body);
  return body as T;
}

const memberPath = (userId: string) => `/api/v1/members/${encodeURIComponent(userId)}`;

export const membersClient = (csrfToken: string) => ({
  list: () => call<{ members: MemberView[]; invites: InviteView[] }>("/api/v1/members", csrfToken),
  invite: (email: string, role: Role) => call<InviteView & { url: string }>("/api/v1/members/invites", csrfToken, { method: "POST", body: JSON.stringify({ email, role }) }),
  revokeInvite: (id: string) => call<void>(`/api/v1/members/invites/${encodeURIComponent(id)}`, csrfToken, { method: "DELETE" }),
  setRole: (userId: string, role: Role) => call<MemberView>(memberPath(userId), csrfToken, { method: "PATCH", body: JSON.stringify({ role }) }),
  remove: (userId: string) => call<void>(memberPath(userId), csrfToken, { method: "DELETE" }),
});

/** Makes the session act in another of the person's projects (POST /auth/project). */
export const switchProject = (csrfToken: string, project: string) => call<{ project: string; role: Role; keyId: string }>("/auth/project", csrfToken, { method: "POST", body: JSON.stringify({ project }) });
