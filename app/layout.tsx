import type { Metadata } from "next";
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

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body className="min-h-screen bg-white text-zinc-900 antialiased dark:bg-zinc-950 dark:text-zinc-100">
        <Providers>
          <Nav />
          {children}
        </Providers>
      </body>
    </html>
  );
}
