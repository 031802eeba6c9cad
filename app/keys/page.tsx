import { KeysPage } from "@/components/keys/keys-page";

export default function Page() {
  return <KeysPage />;
}
