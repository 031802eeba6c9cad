"use client";

export default function ErrorBoundary({ error, reset }: { error: Error & { digest?: string }; reset(): void }) {
  return (
    <main className="mx-auto max-w-xl px-6 py-16">
      <h1 className="text-2xl font-semibold">Something went wrong</h1>
      <p role="alert" className="mt-3 text-sm">
        {error.message || "An unexpected error occurred."}
      </p>
      <button type="button" onClick={reset} className="mt-4 rounded bg-blue-700 px-4 py-2 text-sm text-white">
        Try again
      </button>
    </main>
  );
}
