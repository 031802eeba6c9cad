/** "Copy as curl" and "copy as fetch" for the exact request the playground would send. Browser-safe. */

import { OPERATIONS, toRequestBody, type Composition } from "./composition";

export interface RequestSnippet {
  origin: string;
  path: string;
  body: unknown;
  /** Shown as a placeholder unless the user asks to include the key. */
  apiKey?: string;
  accept?: string;
}

const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

export function toCurl({ origin, path, body, apiKey, accept }: RequestSnippet): string {
  const lines = [
    `curl ${accept === "text/event-stream" ? "-N " : ""}${shellQuote(`${origin}${path}`)}`,
    `  -H ${shellQuote(`Api-Key: ${apiKey ?? "$GENSERVE_API_KEY"}`)}`.replace(/'Api-Key: \$GENSERVE_API_KEY'/, '"Api-Key: $GENSERVE_API_KEY"'),
    `  -H 'Content-Type: application/json'`,
    ...(accept ? [`  -H ${shellQuote(`Accept: ${accept}`)}`] : []),
    `  --data-raw ${shellQuote(JSON.stringify(body))}`,
  ];
  return lines.join(" \\\n");
}

export function toFetch({ origin, path, body, apiKey, accept }: RequestSnippet): string {
  const headers: Record<string, string> = { "Api-Key": apiKey ?? "${process.env.GENSERVE_API_KEY}", "Content-Type": "application/json" };
  if (accept) headers.Accept = accept;
  const headerLines = Object.entries(headers)
    .map(([k, v]) => (v.startsWith("${") ? `    ${JSON.stringify(k)}: process.env.GENSERVE_API_KEY ?? "",` : `    ${JSON.stringify(k)}: ${JSON.stringify(v)},`))
    .join("\n");
  return [
    `const response = await fetch(${JSON.stringify(`${origin}${path}`)}, {`,
    `  method: "POST",`,
    `  headers: {`,
    headerLines,
    `  },`,
    `  body: JSON.stringify(${JSON.stringify(body, null, 2).replace(/\n/g, "\n  ")}),`,
    `});`,
    accept === "text/event-stream"
      ? `// Server-Sent Events: read response.body with an SSE parser (e.g. eventsource-parser).`
      : `if (!response.ok) throw new Error((await response.json()).detail);\nconst result = await response.json();`,
  ].join("\n");
}

/** The request a composition makes, as a snippet: its operation's path, and the body as far as it is complete. */
export function compositionSnippet(c: Composition, origin: string): RequestSnippet {
  let body: Record<string, unknown> = {};
  try {
    body = toRequestBody(c);
  } catch {
    // An incomplete composition (a schema that is not JSON yet) is copied as far as it goes.
  }
  const path = OPERATIONS.find((o) => o.value === c.operation)!.path;
  return { origin, path, body, accept: c.operation === "stream-object" ? "text/event-stream" : undefined };
}
