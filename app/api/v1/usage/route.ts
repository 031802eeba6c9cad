import { otherMethods } from "@/lib/http/route";
import { usage } from "@/lib/http/usage-route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = usage;

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
