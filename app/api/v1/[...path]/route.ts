import { GenserveError } from "@/lib/errors";
import { route } from "@/lib/http/route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

const notFound = route(async ({ request }) => {
  throw new GenserveError("not_found", { detail: `${request.method} ${new URL(request.url).pathname} is not an operation of this API.` });
});

export { notFound as GET, notFound as POST, notFound as PUT, notFound as PATCH, notFound as DELETE };
