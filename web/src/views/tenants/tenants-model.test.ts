import { describe, expect, it } from "vitest";
import { createRefused } from "../../problem";
import { tenantBody, tenantDeletionDetail, tenantErrors } from "./tenants-model";

describe("tenantBody", () => {
  it("sends a display name only when one is given", () => {
    expect(tenantBody("  Contoso Ltd ")).toEqual({ displayName: "Contoso Ltd" });
    expect(tenantBody("   ")).toEqual({});
  });
});

describe("tenantErrors", () => {
  it("puts the path parameter's error at the name field, the rest where they came", () => {
    expect(
      tenantErrors([
        { path: "tenant", message: "must be lowercase" },
        { path: "displayName", message: "must not be blank" },
      ]),
    ).toEqual([
      { path: "name", message: "must be lowercase" },
      { path: "displayName", message: "must not be blank" },
    ]);
  });
});

describe("a tenant create", () => {
  it("reads its 412 as the name being taken", () => {
    expect(createRefused(412, "A tenant", "contoso")).toBe("A tenant named contoso exists already: choose another name.");
  });
});

describe("tenantDeletionDetail", () => {
  it("says everything the tenant owns goes, for good", () => {
    const detail = tenantDeletionDetail("contoso");
    expect(detail).toMatch(/^Everything contoso owns is deleted with it: its apps/);
    expect(detail).toMatch(/This cannot be undone\.$/);
  });
});
