import { describe, expect, it } from "vitest";
import { filterAndSort, type AppRow } from "./filter";

const rows: AppRow[] = [
  { name: "orders", state: "Running", mode: "target", current: 2, desired: 3, health: "error", reasons: ["ship: x"] },
  { name: "billing", state: "Stopped", mode: "target", current: 0, desired: 0, health: "healthy", reasons: [] },
  { name: "orders-eu", state: "Running", mode: "incremental", current: null, desired: null, health: null, reasons: [] },
  { name: "audit", state: "Running", mode: "target", current: 5, desired: 5, health: "warning", reasons: ["f: paused"] },
];
const names = (r: AppRow[]) => r.map((x) => x.name);

describe("filterAndSort", () => {
  it("sorts by name by default", () => {
    expect(names(filterAndSort(rows, { text: "", state: "", health: "", sort: "name", descending: false }))).toEqual([
      "audit",
      "billing",
      "orders",
      "orders-eu",
    ]);
  });
  it("filters by text, case-insensitively, and by state", () => {
    expect(names(filterAndSort(rows, { text: "ORD", state: "", health: "", sort: "name", descending: false }))).toEqual([
      "orders",
      "orders-eu",
    ]);
    expect(names(filterAndSort(rows, { text: "", state: "Stopped", health: "", sort: "name", descending: false }))).toEqual([
      "billing",
    ]);
  });
  it("sorts by instances with unknown counts last, ties by name", () => {
    expect(names(filterAndSort(rows, { text: "", state: "", health: "", sort: "current", descending: false }))).toEqual([
      "billing",
      "orders",
      "audit",
      "orders-eu",
    ]);
    expect(names(filterAndSort(rows, { text: "", state: "", health: "", sort: "desired", descending: true }))).toEqual([
      "audit",
      "orders",
      "billing",
      "orders-eu",
    ]);
  });
  it("filters by health and sorts the worst first, unknown health last", () => {
    expect(names(filterAndSort(rows, { text: "", state: "", health: "error", sort: "name", descending: false }))).toEqual([
      "orders",
    ]);
    expect(names(filterAndSort(rows, { text: "", state: "", health: "", sort: "health", descending: true }))).toEqual([
      "orders",
      "audit",
      "billing",
      "orders-eu",
    ]);
  });
});
