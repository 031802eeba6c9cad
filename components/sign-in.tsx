"use client";

import { useEffect, useState, type FormEvent } from "react";
import { ApiError } from "@/lib/client/api";
import { signInOptions, type SignInOptions } from "@/lib/client/sign-in-client";
import { useApiKey } from "./key-context";
import { Button } from "./ui/button";
import { TextInput } from "./ui/field";

const failure = (e: unknown, unauthorized: string) =>
  e instanceof ApiError && e.code === "unauthorized" ? unauthorized : e instanceof ApiError && e.code === "rate_limited" ? e.detail : `Could not sign in: ${(e as Error).message}`;

/**
 * Signs a person in: with the company's identity provider when one is configured, with an email and
 * password (local accounts), or with an API key (the admin key printed at first start). Each ends in
 * a session cookie; the browser keeps no key.
 */
export function SignIn() {
  const { notice } = useApiKey();
  const [options, setOptions] = useState<SignInOptions | null>(null);
  useEffect(() => void signInOptions().then(setOptions, () => setOptions(null)), []);
  const returnTo = typeof window === "undefined" ? "/" : `${window.location.pathname}${window.location.search}`;
  return (
    <main className="mx-auto max-w-lg px-6 py-16">
      <h1 className="text-2xl font-semibold">Sign in</h1>
      {notice ? (
        <p role="alert" className="mt-2 text-sm text-red-700 dark:text-red-400">
          {notice}
        </p>
      ) : null}
      {options?.oidc ? (
        <a
          href={`${options.oidc.loginUrl}?${new URLSearchParams({ returnTo })}`}
          className="mt-6 inline-flex rounded bg-zinc-900 px-4 py-2 text-sm font-medium text-white hover:bg-zinc-700 dark:bg-white dark:text-zinc-900"
        >
          Sign in with {options.oidc.label}
        </a>
      ) : null}
      <PasswordForm />
      <KeyForm />
    </main>
  );
}

function PasswordForm() {
  const { signInWithPassword } = useApiKey();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await signInWithPassword(email.trim(), password);
    } catch (e) {
      setError(failure(e, "The email or password is not right."));
    } finally {
      setBusy(false);
    }
  }
  return (
    <form onSubmit={submit} className="mt-8 space-y-3">
      <h2 id="password-heading" className="text-lg font-medium">
        Email and password
      </h2>
      <label htmlFor="email" className="block text-sm font-medium">
        Email
      </label>
      <TextInput id="email" type="email" autoComplete="username" value={email} onChange={(e) => setEmail(e.target.value)} required />
      <label htmlFor="password" className="block text-sm font-medium">
        Password
      </label>
      <TextInput
        id="password"
        type="password"
        autoComplete="current-password"
        value={password}
        onChange={(e) => setPassword(e.target.value)}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? "password-error" : undefined}
        required
      />
      {error ? (
        <p id="password-error" role="alert" className="text-sm text-red-700 dark:text-red-400">
          {error}
        </p>
      ) : null}
      <Button type="submit" disabled={busy || !email.trim() || !password}>
        {busy ? "Checking…" : "Continue with password"}
      </Button>
    </form>
  );
}

function KeyForm() {
  const { signIn } = useApiKey();
  const [value, setValue] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [checking, setChecking] = useState(false);
  async function submit(event: FormEvent) {
    event.preventDefault();
    setChecking(true);
    setError(null);
    try {
      await signIn(value.trim());
    } catch (e) {
      setError(failure(e, "That key is not valid or has been revoked."));
    } finally {
      setChecking(false);
    }
  }
  return (
    <form onSubmit={submit} className="mt-8 space-y-3">
      <h2 id="key-heading" className="text-lg font-medium">
        API key
      </h2>
      <div className="rounded border border-zinc-200 p-3 text-sm text-zinc-700 dark:border-zinc-800 dark:text-zinc-300" id="first-key">
        <p>
          <strong className="text-zinc-950 dark:text-white">First time here?</strong> When genserve first started (<code>npm start</code> or <code>genserve serve</code>), it printed an admin key,
          starting <code>gs_</code>, in that terminal under “an admin key was created”. It is shown only once.
        </p>
        <p className="mt-1">
          Lost it, or need another? In the server’s folder: <code>npx genserve keys create --name me --admin</code>.
        </p>
      </div>
      <label htmlFor="api-key" className="block text-sm font-medium">
        API key
      </label>
      <TextInput
        id="api-key"
        type="password"
        autoComplete="off"
        value={value}
        onChange={(e) => setValue(e.target.value)}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? "api-key-error" : "api-key-note"}
        className="font-mono"
        placeholder="gs_…"
        required
      />
      <p id="api-key-note" className="text-xs text-zinc-600 dark:text-zinc-400">
        The key is exchanged for a session on this browser (up to 7 days; sign out on a shared computer); the browser does not keep the key.
      </p>
      {error ? (
        <p id="api-key-error" role="alert" className="text-sm text-red-700 dark:text-red-400">
          {error}
        </p>
      ) : null}
      <Button type="submit" variant="primary" size="lg" disabled={checking || !value.trim()}>
        {checking ? "Checking…" : "Sign in"}
      </Button>
    </form>
  );
}
