import { Playground } from "@/components/playground/playground";

export default function PlaygroundPage() {
  return <Playground />;
}
