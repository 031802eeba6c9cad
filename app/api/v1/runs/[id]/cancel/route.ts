import { otherMethods } from "@/lib/http/route";
import { cancelRun } from "@/lib/http/runs";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const POST = cancelRun;

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
