import { describe, expect, it } from "vitest";
import { emptyComposition } from "@/lib/client/composition";
import { compositionSelection, CompositionStore, selectHasInput, selectInput, selectSettings } from "./use-composition";

describe("the composition's store (a key press in Input re-renders only what reads the input)", () => {
  it("tells its subscribers of each change, and of none when nothing changed", () => {
    const store = new CompositionStore(emptyComposition("{}"));
    let told = 0;
    const unsubscribe = store.subscribe(() => told++);
    store.update("input", "a");
    store.update("input", "a");
    store.set((prev) => prev);
    expect(told).toBe(1);
    store.set({ ...store.get(), workflowSlug: "w" });
    expect(store.get()).toMatchObject({ input: "a", workflowSlug: "w" });
    expect(told).toBe(2);
    unsubscribe();
    store.update("input", "ab");
    expect(told).toBe(2);
  });

  it("the settings (all but the input) stay the same object while only the input changes", () => {
    const store = new CompositionStore(emptyComposition("{}"));
    const settings = compositionSelection(store, selectSettings);
    const hasInput = compositionSelection(store, selectHasInput);
    const input = compositionSelection(store, selectInput);
    const first = settings();
    expect(first).not.toHaveProperty("input");
    expect(hasInput()).toBe(false);
    store.update("input", "I");
    store.update("input", "In");
    expect(settings()).toBe(first);
    expect(hasInput()).toBe(true);
    expect(input()).toBe("In");
    store.update("contextSlugs", ["rules"]);
    expect(settings()).not.toBe(first);
    expect(settings()).toMatchObject({ contextSlugs: ["rules"] });
  });
});
