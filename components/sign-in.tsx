"use client";

import { useState, type FormEvent } from "react";
import { ApiError, createApiClient } from "@/lib/client/api";
import { useApiKey } from "./key-context";
import { Button } from "./ui/button";
import { TextInput } from "./ui/field";

/** Asks for an API key and checks it against the API before keeping it for this tab. */
export function SignIn() {
  const { signIn, notice } = useApiKey();
  const [value, setValue] = useState("");
  const [error, setError] = useState<string | null>(notice);
  const [checking, setChecking] = useState(false);
  const [remember, setRemember] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setChecking(true);
    setError(null);
    try {
      await createApiClient(value.trim()).listWorkflows();
      signIn(value.trim(), remember);
    } catch (e) {
      setError(e instanceof ApiError && e.code === "unauthorized" ? "That key is not valid or has been revoked." : `Could not check the key: ${(e as Error).message}`);
    } finally {
      setChecking(false);
    }
  }

  return (
    <main className="mx-auto max-w-lg px-6 py-16">
      <h1 className="text-2xl font-semibold">Sign in</h1>
      <p className="mt-2 text-sm text-zinc-700 dark:text-zinc-300">
        Use a genserve API key (<code>genserve keys create --name me</code>). It stays in this browser tab (unless you ask to be remembered) and is sent only in the Api-Key header.
      </p>
      <form onSubmit={submit} className="mt-6 space-y-3">
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
          aria-describedby={error ? "api-key-error" : undefined}
          className="font-mono"
          placeholder="gs_…"
          required
        />
        {error ? (
          <p id="api-key-error" role="alert" className="text-sm text-red-700 dark:text-red-400">
            {error}
          </p>
        ) : null}
        <div>
          <label className="flex items-center gap-2 text-sm">
            <input type="checkbox" checked={remember} onChange={(e) => setRemember(e.target.checked)} aria-describedby="remember-risk" /> Remember on this device
          </label>
          <p id="remember-risk" className="mt-1 text-xs text-zinc-600 dark:text-zinc-400">
            Every tab of this browser will be signed in, and anyone using this browser profile can use the key until you sign out. Leave it off on a shared computer.
          </p>
        </div>
        <Button type="submit" variant="primary" size="lg" disabled={checking || !value.trim()}>
          {checking ? "Checking…" : "Sign in"}
        </Button>
      </form>
    </main>
  );
}
