import { generateObjectRequest } from "@/lib/api/requests";
import { generate } from "@/lib/http/generate";
import { route } from "@/lib/http/route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const POST = route((ctx) => generate(ctx, "generate.object", generateObjectRequest));
