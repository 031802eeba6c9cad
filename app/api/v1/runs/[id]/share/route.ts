import { otherMethods } from "@/lib/http/route";
import { shareRun } from "@/lib/http/share-routes";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const POST = shareRun;

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
