import { describe, expect, it } from "vitest";
import { filterAndSort, type AppRow } from "./filter";

const rows: AppRow[] = [
  { name: "orders", state: "Running", mode: "target", current: 2, desired: 3 },
  { name: "billing", state: "Stopped", mode: "target", current: 0, desired: 0 },
  { name: "orders-eu", state: "Running", mode: "incremental", current: null, desired: null },
  { name: "audit", state: "Running", mode: "target", current: 5, desired: 5 },
];
const names = (r: AppRow[]) => r.map((x) => x.name);

describe("filterAndSort", () => {
  it("sorts by name by default", () => {
    expect(names(filterAndSort(rows, { text: "", state: "", sort: "name", descending: false }))).toEqual([
      "audit",
      "billing",
      "orders",
      "orders-eu",
    ]);
  });
  it("filters by text, case-insensitively, and by state", () => {
    expect(names(filterAndSort(rows, { text: "ORD", state: "", sort: "name", descending: false }))).toEqual([
      "orders",
      "orders-eu",
    ]);
    expect(names(filterAndSort(rows, { text: "", state: "Stopped", sort: "name", descending: false }))).toEqual([
      "billing",
    ]);
  });
  it("sorts by instances with unknown counts last, ties by name", () => {
    expect(names(filterAndSort(rows, { text: "", state: "", sort: "current", descending: false }))).toEqual([
      "billing",
      "orders",
      "audit",
      "orders-eu",
    ]);
    expect(names(filterAndSort(rows, { text: "", state: "", sort: "desired", descending: true }))).toEqual([
      "audit",
      "orders",
      "billing",
      "orders-eu",
    ]);
  });
});
