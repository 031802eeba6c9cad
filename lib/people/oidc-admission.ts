import "server-only";
import type { AuthSettings } from "../config/schema";

type OidcSettings = NonNullable<AuthSettings["oidc"]>;

/** The email's domain, lower-cased; null when it has none. */
const domainOf = (email: string): string | null => {
  const at = email.lastIndexOf("@");
  return at > 0 && at < email.length - 1 ? email.slice(at + 1).toLowerCase() : null;
};

/**
 * Whether a person the identity provider signed in, unknown to genserve, may be created. Anyone the
 * provider accepts is not enough (a public provider accepts everyone): only when their groups map to
 * a role (`mappedRole`), when `defaultRole` is set (admitting everyone the provider accepts, on
 * purpose), or when their verified email's domain is in `allowedDomains` — and Google's `hd` claim
 * (the Workspace domain), when present, is in it too. Otherwise only people created beforehand
 * (`genserve users create`) sign in.
 */
export function mayCreatePerson(settings: Pick<OidcSettings, "allowedDomains" | "defaultRole">, claims: Record<string, unknown>, mappedRole: boolean): boolean {
  if (mappedRole || settings.defaultRole !== undefined) return true;
  const allowed = new Set(settings.allowedDomains.map((d) => d.toLowerCase()));
  if (allowed.size === 0) return false;
  const email = typeof claims.email === "string" ? claims.email.trim() : "";
  const verified = claims.email_verified === true || claims.email_verified === "true";
  const domain = domainOf(email);
  if (!verified || !domain || !allowed.has(domain)) return false;
  if (claims.hd !== undefined) return typeof claims.hd === "string" && allowed.has(claims.hd.toLowerCase());
  return true;
}
