import { otherMethods } from "@/lib/http/route";
import { replay } from "@/lib/http/runs";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const POST = replay;

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
