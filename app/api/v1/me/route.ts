import { me } from "@/lib/http/keys-routes";
import { otherMethods } from "@/lib/http/route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = me;

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
