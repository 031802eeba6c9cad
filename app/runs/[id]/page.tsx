import { RunDetailPage } from "@/components/runs/run-detail";

export default async function Page({ params }: { params: Promise<{ id: string }> }) {
  return <RunDetailPage id={(await params).id} />;
}
