import http from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";

/** A person at the test identity provider. */
export interface TestAccount {
  email: string;
  groups: string[];
  emailVerified?: boolean;
}

/**
 * A real OpenID provider (`oidc-provider`, certified) on loopback for the sign-in suites. Its
 * address is known before genserve starts (genserve's configuration names it); the client, which
 * needs genserve's callback address, is registered by `register` once genserve listens.
 */
export async function startTestProvider(accounts: Record<string, TestAccount>) {
  let handler: http.RequestListener = (_req, res) => res.writeHead(503).end();
  const server = http.createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientSecret = "test-client-secret-0123456789abcdef";
  return {
    issuer,
    clientId: "genserve-test",
    clientSecret,
    register(redirectUri: string) {
      const provider = new Provider(issuer, {
        clients: [{ client_id: "genserve-test", client_secret: clientSecret, redirect_uris: [redirectUri], grant_types: ["authorization_code"], response_types: ["code"] }],
        claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"], groups: ["groups"] },
        scopes: ["openid", "email", "profile", "groups"],
        pkce: { required: () => true },
        cookies: { keys: ["test-cookie-key-0123456789"] },
        findAccount: (_ctx, id) => {
          const account = accounts[id];
          if (!account) return undefined;
          return { accountId: id, claims: () => ({ sub: id, email: account.email, email_verified: account.emailVerified ?? true, name: id, groups: account.groups }) };
        },
      });
      handler = provider.callback();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Cookies per origin, as a browser would keep them (paths ignored: each test origin is one app). */
export class CookieJar {
  private readonly jars = new Map<string, Map<string, string>>();
  store(url: string, response: Response): void {
    const origin = new URL(url).origin;
    const jar = this.jars.get(origin) ?? new Map<string, string>();
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (value === "" || attributes.some((a) => /^\s*max-age=0\s*$/i.test(a))) jar.delete(name);
      else jar.set(name, value);
    }
    this.jars.set(origin, jar);
  }
  header(url: string): string {
    return [...(this.jars.get(new URL(url).origin) ?? new Map<string, string>())].map(([k, v]) => `${k}=${v}`).join("; ");
  }
  get(url: string, name: string): string | undefined {
    return this.jars.get(new URL(url).origin)?.get(name);
  }
  set(url: string, name: string, value: string): void {
    const origin = new URL(url).origin;
    const jar = this.jars.get(origin) ?? new Map<string, string>();
    jar.set(name, value);
    this.jars.set(origin, jar);
  }
  /** Sends a request with this jar's cookies (no redirects followed) and keeps the cookies of the answer. */
  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const cookie = this.header(url);
    const response = await fetch(url, { ...init, redirect: "manual", headers: { ...(cookie ? { cookie } : {}), ...(init.headers as Record<string, string>) } });
    this.store(url, response);
    return response;
  }
}
