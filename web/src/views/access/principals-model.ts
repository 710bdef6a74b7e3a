// What the principal sections decide without a browser: the three kinds' words, what a PUT's
// answer means (the API's PUT for an identity or a service principal creates or reads back, so
// a 200 is a name that was taken), a user's body, and how many assignments a deletion takes.

import type { Schemas } from "../../api/client";

export type PrincipalKind = "identity" | "servicePrincipal" | "user";

export const nouns: Record<PrincipalKind, { one: string; article: string }> = {
  identity: { one: "identity", article: "An identity" },
  servicePrincipal: { one: "service principal", article: "A service principal" },
  user: { one: "user", article: "A user" },
};

/// What a create's answer means for the form: made (201), or the name was taken (200: the API
/// answered with the one that exists, unchanged, and for a service principal without its
/// secret), or refused (anything else, shown as the API's problem).
export type Created = { made: true } | { made: false; taken: string } | { made: false; taken: null };

export function createOutcome(kind: PrincipalKind, status: number, name: string): Created {
  if (status === 201) return { made: true };
  if (status === 200) {
    const taken = `${nouns[kind].article} named ${name} exists already: choose another name.`;
    return {
      made: false,
      taken:
        kind === "servicePrincipal"
          ? `${taken} Its secret is not shown again; replace it with New secret on its row.`
          : taken,
    };
  }
  return { made: false, taken: null };
}

/// A user's PUT replaces its issuer and subject when the name exists: the create form says the
/// name is taken instead of changing someone else.
export function userTaken(users: readonly { name: string }[], name: string): string | null {
  return users.some((u) => u.name === name) ? `${nouns.user.article} named ${name} is registered already: choose another name.` : null;
}

export function userBody(issuer: string, subject: string): Schemas["UserWrite"] {
  return { issuer: issuer.trim(), subject: subject.trim() };
}

/// The confirmation's detail for deleting a principal: what stops working, and the role
/// assignments that go with it (counted from the list the caller could read, if any).
export function deletionDetail(kind: PrincipalKind, name: string, assignments: number | null): string {
  const what =
    kind === "identity"
      ? `Apps that name ${name} in identity.userAssignedIdentities can no longer get its tokens.`
      : kind === "servicePrincipal"
        ? `Its secret and the tokens issued to it stop working at once.`
        : `${name} can no longer act in this tenant, even with a valid token from its provider.`;
  const held =
    assignments === null
      ? "Its role assignments are removed with it."
      : assignments === 0
        ? "It holds no role assignment."
        : `Its ${assignments === 1 ? "role assignment is" : `${assignments} role assignments are`} removed with it.`;
  return `${what} ${held} This cannot be undone.`;
}

/// Role assignments a principal holds, if the assignments could be read.
export function assignmentsOf(assignments: readonly { principalId: string }[] | null, principalId: string): number | null {
  return assignments === null ? null : assignments.filter((a) => a.principalId === principalId).length;
}
