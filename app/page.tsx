import Link from "next/link";

export default function Home() {
  return (
    <main className="mx-auto max-w-3xl px-6 py-16">
      <h1 className="text-3xl font-semibold">genserve</h1>
      <p className="mt-4 text-zinc-700 dark:text-zinc-300">
        A self-hosted generation service: name a workflow, send an input and a JSON Schema, and get back a value that validates
        against it — in one response, as a stream, or as text — with run metadata.
      </p>
      <ul className="mt-8 list-disc space-y-2 pl-6">
        <li>
          <Link className="text-blue-700 underline dark:text-blue-400" href="/docs">
            API reference
          </Link>{" "}
          (also as <a className="text-blue-700 underline dark:text-blue-400" href="/api/v1/openapi.json">OpenAPI 3.1</a>)
        </li>
        <li>
          Health: <a className="text-blue-700 underline dark:text-blue-400" href="/readyz">/readyz</a>
        </li>
      </ul>
    </main>
  );
}
