import { describe, expect, it } from "vitest";
import { NO_LIMITS } from "../domain/key-limits";
import { isGenserveError } from "../errors";
import { assertModelAllowed } from "./owner-access";
import type { Principal } from "./api-keys";

const key = (workflows: string[] | null): Principal => ({ keyId: "key_1", name: "k", admin: false, role: "editor", projectId: "prj_default", limits: { ...NO_LIMITS, workflows }, via: "key" });

describe("assertModelAllowed", () => {
  it("lets a key limited to workflows run them only on their own models, refusing another alias with 403 naming the field", () => {
    expect(() => assertModelAllowed(key(null), "fast", "free")).not.toThrow();
    expect(() => assertModelAllowed(key(["w"]), undefined, "free")).not.toThrow();
    expect(() => assertModelAllowed(key(["w"]), "free", "free")).not.toThrow();
    let refused: unknown;
    try {
      assertModelAllowed(key(["w"]), "fast", "free");
    } catch (error) {
      refused = error;
    }
    expect(isGenserveError(refused) && { code: refused.code, status: refused.status, errors: refused.errors }).toEqual({
      code: "forbidden",
      status: 403,
      errors: [{ path: "/model", message: 'model "fast" is not allowed for this key (it may run its workflows only on their own models)' }],
    });
  });
});
