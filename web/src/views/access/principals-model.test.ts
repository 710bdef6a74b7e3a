import { describe, expect, it } from "vitest";
import { assignmentsOf, createOutcome, deletionDetail, userBody, userTaken } from "./principals-model";

describe("createOutcome", () => {
  it("reads 201 as made", () => {
    expect(createOutcome("identity", 201, "mi")).toEqual({ made: true });
    expect(createOutcome("servicePrincipal", 201, "ci")).toEqual({ made: true });
  });

  it("reads 200 as a name taken (the API read the existing one back)", () => {
    expect(createOutcome("identity", 200, "mi")).toEqual({ made: false, taken: "An identity named mi exists already: choose another name." });
    expect(createOutcome("user", 200, "ann")).toEqual({ made: false, taken: "A user named ann exists already: choose another name." });
  });

  it("says a taken service principal's secret is not shown again and how to replace it", () => {
    const outcome = createOutcome("servicePrincipal", 200, "ci");
    expect(outcome.made).toBe(false);
    expect(!outcome.made && outcome.taken).toMatch(/^A service principal named ci exists already.*not shown again.*New secret/);
  });

  it.each([400, 403, 404, 409, 422, 500])("leaves %i to the API's problem", (status) => {
    expect(createOutcome("identity", status, "mi")).toEqual({ made: false, taken: null });
  });
});

describe("userTaken", () => {
  it("names a registered user's name, and nothing else", () => {
    const users = [{ name: "ann" }, { name: "bob" }];
    expect(userTaken(users, "ann")).toBe("A user named ann is registered already: choose another name.");
    expect(userTaken(users, "carol")).toBeNull();
    expect(userTaken([], "ann")).toBeNull();
  });
});

describe("userBody", () => {
  it("trims the issuer and the subject", () => {
    expect(userBody("  https://login.example/v2.0 ", " 1234\n")).toEqual({ issuer: "https://login.example/v2.0", subject: "1234" });
  });
});

describe("deletionDetail", () => {
  it("says what stops working for each kind", () => {
    expect(deletionDetail("identity", "mi", null)).toMatch(/^Apps that name mi in identity.userAssignedIdentities/);
    expect(deletionDetail("servicePrincipal", "ci", null)).toMatch(/^Its secret and the tokens issued to it stop working/);
    expect(deletionDetail("user", "ann", null)).toMatch(/^ann can no longer act in this tenant/);
  });

  it("counts the role assignments that go with it when they could be read", () => {
    expect(deletionDetail("user", "ann", null)).toContain("Its role assignments are removed with it.");
    expect(deletionDetail("user", "ann", 0)).toContain("It holds no role assignment.");
    expect(deletionDetail("user", "ann", 1)).toContain("Its role assignment is removed with it.");
    expect(deletionDetail("user", "ann", 3)).toContain("Its 3 role assignments are removed with it.");
    expect(deletionDetail("user", "ann", 3)).toMatch(/This cannot be undone\.$/);
  });
});

describe("assignmentsOf", () => {
  it("counts one principal's assignments, or says it cannot", () => {
    const held = [{ principalId: "a" }, { principalId: "b" }, { principalId: "a" }];
    expect(assignmentsOf(held, "a")).toBe(2);
    expect(assignmentsOf(held, "c")).toBe(0);
    expect(assignmentsOf(null, "a")).toBeNull();
  });
});
