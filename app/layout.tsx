import type { Metadata } from "next";
import { headers } from "next/headers";
import type { ReactNode } from "react";
import { Nav } from "@/components/nav";
import { Providers } from "@/components/providers";
import "./globals.css";

// Pages render per request: each gets its own CSP nonce (proxy.ts), which Next.js puts on its scripts.
export const dynamic = "force-dynamic";

export const metadata: Metadata = {
  title: "genserve",
  description: "Structured objects, streams and text from named workflows.",
  icons: { icon: "/favicon.svg" },
};

/**
 * Applied before the first paint, so a dark page never flashes white: the stored theme, else the
 * system's (components/theme.tsx keeps it in step afterwards). Inline, under the request's nonce.
 */
const THEME_SCRIPT = `try{var t=localStorage.getItem("genserve.theme");if(t==="dark"||(!t&&matchMedia("(prefers-color-scheme: dark)").matches))document.documentElement.classList.add("dark")}catch(e){}`;

export default async function RootLayout({ children }: { children: ReactNode }) {
  const nonce = /'nonce-([^']+)'/.exec((await headers()).get("content-security-policy") ?? "")?.[1];
  return (
    // The theme script may add "dark" before React hydrates.
    <html lang="en" suppressHydrationWarning>
      <head>
        <script nonce={nonce} dangerouslySetInnerHTML={{ __html: THEME_SCRIPT }} />
      </head>
      <body className="min-h-screen bg-white text-zinc-900 antialiased dark:bg-zinc-950 dark:text-zinc-100">
        <Providers>
          <Nav />
          {children}
        </Providers>
      </body>
    </html>
  );
}
