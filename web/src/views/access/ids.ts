// Ids the dashboard chooses for what it creates: pure, so tested without a browser.

/// A random (version 4) UUID for the new assignment: the client chooses its id, as ARM's do.
/// `crypto.randomUUID` exists only on secure origins; a dashboard served over plain HTTP on a
/// private network is not one.
export function newId(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const hex = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
