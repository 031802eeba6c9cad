import { generate } from "@/lib/http/generate";
import { otherMethods, route } from "@/lib/http/route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const POST = route((ctx) => generate(ctx, "generate.object"));

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
