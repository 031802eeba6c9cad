import type { Metadata } from "next";
import { SharedPage } from "@/components/shared/shared-page";

export const metadata: Metadata = { title: "Shared · genserve", robots: { index: false, follow: false }, referrer: "no-referrer" };

export default async function Page({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  return <SharedPage token={token} />;
}
