import { metrics } from "@/lib/http/metrics-route";
import { otherMethods } from "@/lib/http/route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = metrics;

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
