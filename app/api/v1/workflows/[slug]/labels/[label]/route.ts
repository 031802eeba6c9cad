import { otherMethods } from "@/lib/http/route";
import { deleteLabel, promoteLabel, putLabel } from "@/lib/http/workflow-routes";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const PUT = putLabel;
export const POST = promoteLabel;
export const DELETE = deleteLabel;

export const { GET, PATCH } = otherMethods("PUT", "POST", "DELETE");
