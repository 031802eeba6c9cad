"use client";

import type { ReactNode } from "react";
import type { ApiClient } from "@/lib/client/api";
import { useApiKey } from "./key-context";
import { SignIn } from "./sign-in";

/** Renders its children with a signed-in client, or the sign-in form. */
export function RequireKey({ children }: { children: (client: ApiClient, apiKey: string) => ReactNode }) {
  const { apiKey, client } = useApiKey();
  if (apiKey === null) return null;
  if (!apiKey || !client) return <SignIn />;
  return <>{children(client, apiKey)}</>;
}
