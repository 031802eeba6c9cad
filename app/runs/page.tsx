import { RunsPage } from "@/components/runs/runs-page";

export default function Page() {
  return <RunsPage />;
}
