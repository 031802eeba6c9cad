import "server-only";
import { createHash } from "node:crypto";
import * as client from "openid-client";
import type { AuthSettings, Role } from "../config/schema";
import { ROLES } from "../config/schema";
import { GenserveError } from "../errors";
import type { Store, UserRecord } from "../store/store-types";
import type { Accounts } from "./accounts";
import { mayCreatePerson } from "./oidc-admission";
import { safeReturnTo } from "./return-to";

type OidcSettings = NonNullable<AuthSettings["oidc"]>;

/** The cookie binding a sign-in under way to the browser that began it (its value is the state). */
export const LOGIN_COOKIE = "genserve_oidc";
/** How long a person may take at their provider. */
export const LOGIN_TTL_MS = 10 * 60_000;
/**
 * Sign-ins under way at once, across replicas (each is a row until the provider sends the browser
 * back or it expires): anyone can start one, so their number is bounded.
 */
export const MAX_PENDING_LOGINS = 10_000;

const stateId = (state: string) => createHash("sha256").update(state, "utf8").digest("hex");
const refused = (detail: string, cause?: unknown) => new GenserveError("sign_in_failed", { detail, cause });

/** The highest of `roles`, or null when there is none. */
const highest = (roles: Role[]): Role | null => ROLES.find((r) => roles.includes(r)) ?? null;

/**
 * Sign-in with an OpenID Connect provider: authorization code with PKCE, state and nonce, every
 * token checked by `openid-client` (certified), none by hand. What is kept between the redirect to
 * the provider and its answer — the PKCE verifier, the nonce, where to return — is a row keyed by
 * the state's hash, valid once and for 10 minutes; the state itself is in an HttpOnly cookie, so the
 * answer is accepted only in the browser that began the sign-in.
 */
export class OidcSignIn {
  private configuration?: Promise<client.Configuration>;

  constructor(
    private readonly settings: OidcSettings,
    private readonly publicUrl: string,
    private readonly store: Store,
    private readonly accounts: Accounts,
  ) {}

  /** What the sign-in button says. */
  get label(): string {
    return this.settings.name ?? new URL(this.settings.issuer).host;
  }

  get redirectUri(): string {
    return `${this.publicUrl}/auth/callback`;
  }

  /** The provider's configuration, discovered on first use (again after a failure). */
  private discover(): Promise<client.Configuration> {
    this.configuration ??= client
      .discovery(new URL(this.settings.issuer), this.settings.clientId, this.settings.clientSecret, undefined, {
        // An http issuer is only for providers on loopback (tests, local set-ups); real ones are https.
        execute: new URL(this.settings.issuer).protocol === "http:" ? [client.allowInsecureRequests] : [],
        timeout: 10,
      })
      .catch((error: unknown) => {
        this.configuration = undefined;
        throw refused("The identity provider could not be reached.", error);
      });
    return this.configuration;
  }

  /** Where to send the browser, and the state to keep in its cookie. */
  async begin(returnTo: string | null, now = new Date()): Promise<{ url: string; state: string }> {
    const config = await this.discover();
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const saved = await this.store.people.savePendingLogin({
      id: stateId(state),
      verifier,
      nonce,
      returnTo: safeReturnTo(returnTo),
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + LOGIN_TTL_MS).toISOString(),
    }, MAX_PENDING_LOGINS);
    if (!saved) throw new GenserveError("rate_limited", { detail: "Too many sign-ins are under way; try again in a few minutes.", headers: { "Retry-After": "60" } });
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: this.redirectUri,
      scope: this.settings.scopes.join(" "),
      state,
      nonce,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
    });
    return { url: url.href, state };
  }

  /**
   * Completes a sign-in from the provider's answer (`search`: the callback's query) in the browser
   * whose cookie holds `cookieState`: the person, created or linked, and where to go next.
   */
  async finish(search: string, cookieState: string | null, now = new Date()): Promise<{ user: UserRecord; returnTo: string }> {
    const params = new URLSearchParams(search);
    const state = params.get("state");
    if (!state || !cookieState || state !== cookieState) throw refused("The sign-in's state does not match this browser's: start again from the sign-in page.");
    const pending = await this.store.people.takePendingLogin(stateId(state), now.toISOString());
    if (!pending) throw refused("This sign-in has expired or was completed already: start again from the sign-in page.");
    if (params.get("error")) throw refused(`The identity provider refused the sign-in (${params.get("error")!.slice(0, 100)}).`);
    const config = await this.discover();
    let claims: Record<string, unknown>;
    try {
      const tokens = await client.authorizationCodeGrant(config, new URL(`${this.redirectUri}?${params.toString()}`), {
        pkceCodeVerifier: pending.verifier,
        expectedState: state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      claims = { ...(tokens.claims() ?? {}) };
      // Providers that keep email or groups out of the ID token give them at the userinfo endpoint.
      const wanted = ["email", ...(this.settings.groupsClaim ? [this.settings.groupsClaim] : [])];
      if (wanted.some((c) => claims[c] === undefined) && config.serverMetadata().userinfo_endpoint) {
        const info = await client.fetchUserInfo(config, tokens.access_token, String(claims.sub));
        claims = { ...info, ...claims };
      }
    } catch (error) {
      if (error instanceof GenserveError) throw error;
      throw refused("The identity provider's answer was not accepted (its state, nonce, code or token did not check out).", error);
    }
    const user = await this.personOf(claims, now);
    return { user, returnTo: pending.returnTo };
  }

  /**
   * The person of the ID token's claims: linked by (issuer, subject), else by verified email, else
   * created when `mayCreatePerson` allows it; their role from their groups.
   */
  private async personOf(claims: Record<string, unknown>, now: Date): Promise<UserRecord> {
    const issuer = String(claims.iss);
    const subject = String(claims.sub);
    const email = typeof claims.email === "string" ? claims.email : null;
    const verified = claims.email_verified === true || claims.email_verified === "true";
    const { role, mapped } = this.roleOf(claims);
    let user = await this.store.people.userByIdentity(issuer, subject);
    if (!user && email) {
      const known = await this.accounts.byEmail(email);
      if (known && !verified) throw refused("The identity provider did not confirm this email address, which belongs to an existing person.");
      if (!known && !mayCreatePerson(this.settings, claims, mapped)) {
        throw refused("You have no genserve account yet: ask an administrator to create one for your email address.");
      }
      user = known ?? (await this.createOrFind(email, typeof claims.name === "string" ? claims.name : null, role ?? this.settings.defaultRole ?? "viewer", now));
      await this.store.people.linkIdentity(issuer, subject, user.id, now.toISOString());
      // An account made beforehand (by the CLI, or by whoever redeemed an invitation to this email)
      // becomes the provider's person now: whoever was signed in to it before is signed out.
      if (known) await this.store.people.revokeSessions({ userId: known.id }, now.toISOString());
    }
    if (!user) throw refused("The identity provider gave no email address for this person (ask for the `email` scope).");
    if (user.disabledAt !== null) throw refused("This person's access has been removed.");
    if (role) await this.accounts.setRole(user.id, role);
    return user;
  }

  private async createOrFind(email: string, name: string | null, role: Role, now: Date): Promise<UserRecord> {
    try {
      return await this.accounts.create({ email, name, role }, now);
    } catch (error) {
      // Another replica created them a moment ago.
      const found = await this.accounts.byEmail(email);
      if (found) return found;
      throw error;
    }
  }

  /**
   * The role the claims' groups map to (`mapped`), else `defaultRole`; null when no mapping is
   * configured (a person's role is then left as it is). Refused when mapped groups are required (`roles` set, no `defaultRole`) and none matches.
   */
  private roleOf(claims: Record<string, unknown>): { role: Role | null; mapped: boolean } {
    const mapping = this.settings.roles;
    if (!this.settings.groupsClaim || Object.keys(mapping).length === 0) return { role: null, mapped: false };
    const raw = claims[this.settings.groupsClaim];
    const groups = Array.isArray(raw) ? raw.map(String) : typeof raw === "string" ? raw.split(/[\s,]+/) : [];
    const role = highest(groups.flatMap((g) => (mapping[g] ? [mapping[g]] : [])));
    if (role) return { role, mapped: true };
    if (this.settings.defaultRole) return { role: this.settings.defaultRole, mapped: false };
    throw refused("None of your groups is allowed to use genserve; ask an administrator.");
  }
}
