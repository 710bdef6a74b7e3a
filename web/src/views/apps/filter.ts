// The apps list's filter and sort: pure, so they are tested without a browser.

export interface AppRow {
  name: string;
  state: string;
  mode: string;
  current: number | null;
  desired: number | null;
  /// From the list's `status.health`; null when the API gave none.
  health: Health | null;
  /// What makes it so: the first errors, then warnings.
  reasons: string[];
}

export type Health = "healthy" | "warning" | "error";
export type SortKey = "name" | "state" | "current" | "desired" | "health";

// Worst first when sorted by health (descending = worst first).
const HEALTH_RANK: Record<Health, number> = { healthy: 0, warning: 1, error: 2 };

export interface ListOptions {
  text: string;
  state: string; // "" = any
  health: Health | ""; // "" = any
  sort: SortKey;
  descending: boolean;
}

export function filterAndSort(rows: AppRow[], options: ListOptions): AppRow[] {
  const text = options.text.trim().toLowerCase();
  const kept = rows.filter(
    (row) =>
      (text === "" || row.name.toLowerCase().includes(text)) &&
      (options.state === "" || row.state === options.state) &&
      (options.health === "" || row.health === options.health),
  );
  const direction = options.descending ? -1 : 1;
  return kept.sort((a, b) => {
    // Unknown counts and health (not given) come last in either direction.
    const key = options.sort;
    if ((key === "current" || key === "desired" || key === "health") && (a[key] === null) !== (b[key] === null)) {
      return a[key] === null ? 1 : -1;
    }
    const primary = compare(a, b, key);
    return primary !== 0 ? primary * direction : a.name.localeCompare(b.name);
  });
}

function compare(a: AppRow, b: AppRow, key: SortKey): number {
  switch (key) {
    case "name":
      return a.name.localeCompare(b.name);
    case "state":
      return a.state.localeCompare(b.state);
    case "current":
    case "desired":
      return (a[key] ?? 0) - (b[key] ?? 0);
    case "health":
      return (a.health ? HEALTH_RANK[a.health] : 0) - (b.health ? HEALTH_RANK[b.health] : 0);
  }
}
