import { TableHead } from "../ui/table-head";
import { Page } from "../ui/page";
import { ScrollTable } from "../ui/scroll-table";
import { ModelSetup } from "./model-setup";

/**
 * A browsable rendering of the OpenAPI document: operations, request and response schemas, and the
 * error codes. Rendered on the server from the same document `/api/v1/openapi.json` serves.
 */

interface Operation {
  operationId: string;
  summary: string;
  description?: string;
  parameters?: { name: string; in: string; required?: boolean; description?: string; schema?: unknown }[];
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { description: string; content?: Record<string, { schema: unknown }> }>;
}

type Doc = {
  info: { title: string; description: string };
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
  "x-error-codes": Record<string, { status: number; title: string; retryable: boolean }>;
};

const refName = (schema: unknown): string | null => {
  const ref = (schema as { $ref?: string } | undefined)?.$ref;
  return ref ? ref.split("/").pop()! : null;
};

function SchemaLink({ schema }: { schema: unknown }) {
  const name = refName(schema);
  if (name) {
    return (
      <a href={`#schema-${name}`} className="font-mono text-blue-700 underline dark:text-blue-400">
        {name}
      </a>
    );
  }
  return <code className="font-mono text-xs">{JSON.stringify(schema)}</code>;
}

export function ApiReference({ document }: { document: Record<string, unknown> }) {
  const doc = document as unknown as Doc;
  return (
    <Page>
      <h1 className="text-3xl font-semibold">{doc.info.title}</h1>
      <p className="mt-3 text-zinc-700 dark:text-zinc-300">{doc.info.description}</p>
      <p className="mt-2 text-sm">
        Machine-readable: <a className="text-blue-700 underline dark:text-blue-400" href="/api/v1/openapi.json">/api/v1/openapi.json</a>
      </p>

      <ModelSetup />

      <h2 className="mt-10 text-2xl font-semibold">Operations</h2>
      {Object.entries(doc.paths).flatMap(([path, methods]) =>
        Object.entries(methods).map(([method, op]) => (
          <section key={`${method} ${path}`} id={op.operationId} className="mt-6 rounded-lg border border-zinc-200 p-5 dark:border-zinc-800">
            <h3 className="font-mono text-lg [overflow-wrap:anywhere]">
              <span className="mr-2 rounded bg-zinc-900 px-2 py-0.5 text-sm uppercase text-white dark:bg-zinc-100 dark:text-zinc-900">{method}</span>
              {path}
            </h3>
            <p className="mt-2">{op.summary}</p>
            {op.description && <p className="mt-2 text-sm text-zinc-700 dark:text-zinc-300">{op.description}</p>}
            {op.parameters && (
              <ul className="mt-3 list-disc pl-6 text-sm">
                {op.parameters.map((p) => (
                  <li key={p.name}>
                    <code className="font-mono">{p.name}</code> ({p.in}
                    {p.required ? ", required" : ""}) {p.description}
                  </li>
                ))}
              </ul>
            )}
            {op.requestBody && (
              <p className="mt-3 text-sm">
                Request body:{" "}
                {Object.entries(op.requestBody.content).map(([type, c]) => (
                  <span key={type}>
                    <SchemaLink schema={c.schema} /> <span className="text-zinc-600 dark:text-zinc-400">({type})</span>
                  </span>
                ))}
              </p>
            )}
            <ScrollTable className="mt-3 w-full text-left text-sm">
              <TableHead columns={["Status", "Meaning", "Body"]} />
              <tbody>
                {Object.entries(op.responses).map(([status, r]) => (
                  <tr key={status} className="border-b border-zinc-100 align-top dark:border-zinc-900">
                    <td className="py-1 pr-4 font-mono">{status}</td>
                    <td className="py-1 pr-4">{r.description}</td>
                    <td className="py-1">
                      {r.content &&
                        Object.entries(r.content).map(([type, c]) => (
                          <div key={type}>
                            <SchemaLink schema={c.schema} /> <span className="text-zinc-600 dark:text-zinc-400">({type})</span>
                          </div>
                        ))}
                    </td>
                  </tr>
                ))}
              </tbody>
            </ScrollTable>
          </section>
        )),
      )}

      <h2 id="errors" className="mt-10 text-2xl font-semibold">
        Error codes
      </h2>
      <p className="mt-2 text-sm text-zinc-700 dark:text-zinc-300">
        Errors are <code>application/problem+json</code> with <code>type</code>, <code>title</code>, <code>status</code>,{" "}
        <code>detail</code>, <code>code</code>, <code>runId</code> where a run exists, and <code>errors</code> (<code>{"{path, message}"}</code>{" "}
        with JSON Pointers into the request) for validation failures.
      </p>
      <ScrollTable className="mt-3 w-full text-left text-sm">
        <TableHead columns={["Code", "Status", "Meaning", "Retry may help"]} />
        <tbody>
          {Object.entries(doc["x-error-codes"]).map(([code, e]) => (
            <tr key={code} id={`error-${code}`} className="border-b border-zinc-100 dark:border-zinc-900">
              <td className="py-1 pr-4 font-mono">{code}</td>
              <td className="py-1 pr-4 font-mono">{e.status}</td>
              <td className="py-1 pr-4">{e.title}</td>
              <td className="py-1">{e.retryable ? "yes" : "no"}</td>
            </tr>
          ))}
        </tbody>
      </ScrollTable>

      <h2 className="mt-10 text-2xl font-semibold">Schemas</h2>
      {Object.entries(doc.components.schemas).map(([name, schema]) => (
        <section key={name} id={`schema-${name}`} className="mt-4">
          <h3 className="font-mono text-lg [overflow-wrap:anywhere]">{name}</h3>
          {/* Focusable so that keyboard users can scroll a long schema sideways. */}
          <pre tabIndex={0} aria-label={`${name} schema`} className="mt-2 overflow-x-auto rounded bg-zinc-100 p-3 text-xs dark:bg-zinc-900">
            {JSON.stringify(schema, null, 2)}
          </pre>
        </section>
      ))}
    </Page>
  );
}
