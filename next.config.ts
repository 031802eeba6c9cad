import type { NextConfig } from "next";

/**
 * On every response, API included (the pages' Content-Security-Policy, with its per-request nonce,
 * is set by proxy.ts; the API routes the CLI serves itself get them from lib/cli/api-routes.ts).
 * This file imports nothing of the app's: the CLI loads it under tsx.
 */
export const SECURITY_HEADERS = [
  { key: "X-Content-Type-Options", value: "nosniff" },
  { key: "Referrer-Policy", value: "no-referrer" },
  // CSP frame-ancestors says the same to browsers that read it; this is for those that do not.
  { key: "X-Frame-Options", value: "DENY" },
  { key: "Permissions-Policy", value: "camera=(), microphone=(), geolocation=(), payment=(), usb=()" },
  { key: "Cross-Origin-Opener-Policy", value: "same-origin" },
];

const nextConfig: NextConfig = {
  // Native and heavy server packages stay outside the bundle (loaded by Node at run time).
  serverExternalPackages: ["better-sqlite3", "pino", "mammoth", "pdfjs-dist", "node-llama-cpp", "recheck"],
  poweredByHeader: false,
  // Pages, their data and static assets are gzipped when the browser accepts it (the CLI serves
  // hashed static assets brotli-compressed itself: lib/cli/static-assets.ts). The API never goes
  // through this in production (lib/cli/api-routes.ts serves it directly); in development it does,
  // and its event streams are left alone: they send `Cache-Control: no-transform`, which the
  // compression middleware honours.
  compress: true,
  typedRoutes: false,
  experimental: {
    // Next.js would load every page's and route's server bundle at start-up. The API is served by
    // the CLI from app/**/route.ts itself (lib/cli/api-routes.ts), so its ~60 route bundles would
    // sit in memory unused — each with its own copy of Next's route runtime. Pages load on their
    // first request instead.
    preloadEntriesOnStart: false,
  },
  async headers() {
    return [{ source: "/:path*", headers: SECURITY_HEADERS }];
  },
};

export default nextConfig;
