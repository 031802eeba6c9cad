import { UsagePage } from "@/components/usage/usage-page";

export default function Page() {
  return <UsagePage />;
}
