// The bearer token lives in session storage: it dies with the tab, and nothing else on the
// page (no cookie) carries it.

const KEY = "shoal.token";

export function token(): string | null {
  return sessionStorage.getItem(KEY);
}

export function signIn(value: string): void {
  sessionStorage.setItem(KEY, value.trim());
}

export function signOut(): void {
  sessionStorage.removeItem(KEY);
}
