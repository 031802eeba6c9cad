import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // Native and heavy server packages stay outside the bundle (loaded by Node at run time).
  serverExternalPackages: ["better-sqlite3", "pino", "mammoth", "pdfjs-dist", "node-llama-cpp"],
  poweredByHeader: false,
  // The run pipeline streams; gzip would buffer Server-Sent Events.
  compress: false,
  typedRoutes: false,
};

export default nextConfig;
