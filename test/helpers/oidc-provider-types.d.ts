// oidc-provider ships no type declarations; what the test provider (oidc-provider.ts) uses of it.
declare module "oidc-provider" {
  import type { RequestListener } from "node:http";
  interface Account {
    accountId: string;
    claims(): Record<string, unknown> | Promise<Record<string, unknown>>;
  }
  interface Configuration {
    clients: Record<string, unknown>[];
    claims?: Record<string, string[]>;
    scopes?: string[];
    pkce?: { required?: () => boolean };
    cookies?: { keys: string[] };
    findAccount(ctx: unknown, id: string): Account | undefined | Promise<Account | undefined>;
    [key: string]: unknown;
  }
  export default class Provider {
    constructor(issuer: string, configuration: Configuration);
    callback(): RequestListener;
  }
}
