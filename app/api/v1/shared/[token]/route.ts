import { otherMethods } from "@/lib/http/route";
import { sharedView } from "@/lib/http/share-routes";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = sharedView;

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
