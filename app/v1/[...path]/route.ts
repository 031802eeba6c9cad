import { GenserveError } from "@/lib/errors";
import { OPENAI_DIALECT } from "@/lib/http/openai/chat-completions";
import { route } from "@/lib/http/route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

// Paths under /v1 that genserve does not serve (/v1/embeddings, /v1/models/{id}…): a 404 in OpenAI's
// error shape, which OpenAI's clients read, rather than Next.js's page.
const notFound = route(async ({ request }) => {
  throw new GenserveError("not_found", {
    detail: `${request.method} ${new URL(request.url).pathname} is not an operation of genserve's OpenAI-compatible API (it serves POST /v1/chat/completions and GET /v1/models).`,
  });
}, OPENAI_DIALECT);

export { notFound as GET, notFound as POST, notFound as PUT, notFound as PATCH, notFound as DELETE };
