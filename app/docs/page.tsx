import { ApiReference } from "@/components/docs/api-reference";
import { buildOpenApiDocument } from "@/lib/api/openapi";

export const dynamic = "force-static";

export const metadata = { title: "genserve API reference" };

export default function DocsPage() {
  return <ApiReference document={buildOpenApiDocument("v1")} />;
}
