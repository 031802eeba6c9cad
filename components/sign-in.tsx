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
        Use a genserve API key. It stays in this browser tab (unless you ask to be remembered) and is sent only in the Api-Key header.
      </p>
      <div className="mt-3 rounded border border-zinc-200 p-3 text-sm text-zinc-700 dark:border-zinc-800 dark:text-zinc-300" id="first-key">
        <p>
          <strong className="text-zinc-950 dark:text-white">First time here?</strong> When genserve first started (<code>npm start</code> or <code>genserve serve</code>), it printed an admin key,
          starting <code>gs_</code>, in that terminal under “an admin key was created”. It is shown only once.
        </p>
        <p className="mt-1">
          Lost it, or need another? In the server’s folder: <code>npx genserve keys create --name me --admin</code>.
        </p>
      </div>
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
