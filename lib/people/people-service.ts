import "server-only";
import type { Config } from "../config/config-types";
import type { Store } from "../store/store-types";
import { Accounts } from "./accounts";
import { Members } from "./project-members";
import { LOGIN_COOKIE, OidcSignIn } from "./oidc";
import { cookieName, SESSION_COOKIE, Sessions } from "./sessions";

/**
 * How people sign in and stay signed in: local accounts (links, passwords), OpenID Connect when
 * configured, and the sessions both end in. The HTTP layer (lib/http/auth-routes.ts, route.ts)
 * reaches them through `runtime.services.people`.
 */
export class People {
  readonly accounts: Accounts;
  readonly sessions: Sessions;
  /** The people of projects, invitations and switching between projects. */
  readonly members: Members;
  /** Null when no provider is configured (`auth.oidc`). */
  readonly oidc: OidcSignIn | null;
  /** Cookies are `Secure` when the site is served over https. */
  readonly secureCookies: boolean;
  /** The session cookie's and the OIDC sign-in cookie's names (`__Host-` prefixed when Secure). */
  readonly sessionCookie: string;
  readonly loginCookie: string;

  constructor(
    store: Store,
    config: Pick<Config, "auth">,
    readonly publicUrl: string,
  ) {
    const auth = config.auth;
    this.accounts = new Accounts(store, auth);
    this.sessions = new Sessions(store, { idleMs: auth.sessionIdleMs, maxMs: auth.sessionMaxMs });
    this.members = new Members(store, this.accounts, publicUrl);
    this.oidc = auth.oidc ? new OidcSignIn(auth.oidc, publicUrl, store, this.accounts) : null;
    this.secureCookies = publicUrl.startsWith("https:");
    this.sessionCookie = cookieName(SESSION_COOKIE, this.secureCookies);
    this.loginCookie = cookieName(LOGIN_COOKIE, this.secureCookies);
  }
}
