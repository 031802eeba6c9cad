/**
 * Roles a key holds in its project, lowest first. Browser-safe; imports nothing. A route names the
 * least role it needs (lib/http/endpoint.ts); the playground greys out what the key's role may not do.
 */
export const ROLES = ["viewer", "editor", "admin"] as const;
export type Role = (typeof ROLES)[number];

/** Whether `role` is `needed` or above it. */
export const roleAtLeast = (role: Role, needed: Role): boolean => ROLES.indexOf(role) >= ROLES.indexOf(needed);

/** The label only admins may move: what programs run by default. */
export const PROTECTED_LABEL = "production";

/** The project every key, run and entry made before projects existed belongs to (migration 25). */
export const DEFAULT_PROJECT_ID = "prj_default";
export const DEFAULT_PROJECT_SLUG = "default";

/** Why a key of `role` may not do what needs `needed`, in words the playground shows beside a disabled control. */
export function roleReason(role: Role, needed: Role, what: string): string | null {
  return roleAtLeast(role, needed) ? null : `read-only: ${what} needs an ${needed} key (this key is ${role === "viewer" ? "a" : "an"} ${role})`;
}
