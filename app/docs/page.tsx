import { ApiReference } from "@/components/docs/api-reference";
import { openApiDocument } from "@/lib/http/table";

// Rendered per request, not force-static: the layout's theme script carries the request's CSP nonce,
// which a static render has no request to read (a direct load of /docs refused that script and
// flashed the light theme). The document itself is built once per process.
export const dynamic = "force-dynamic";

export const metadata = { title: "genserve API reference" };

let document: Record<string, unknown> | undefined;

export default function DocsPage() {
  document ??= openApiDocument("v1");
  return <ApiReference document={document} />;
}
