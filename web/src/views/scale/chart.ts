// A line chart in plain SVG: a few series over time, each its own colour and name, with a
// table-equivalent legend for screen readers. No chart library to bundle.

import { h } from "../../dom";

export interface Series {
  name: string;
  colour: string;
  points: { at: number; value: number }[];
  /// Dashed, so a series drawn over another (placed over desired) leaves it visible.
  dashed?: boolean;
}

export interface Scaled {
  width: number;
  height: number;
  max: number;
  /// The time range shown, in milliseconds since the epoch.
  from: number;
  to: number;
  paths: string[];
}

/// Maps every series onto one box: time on x (shared range), values on y from 0 to the largest.
export function scale(series: Series[], width: number, height: number): Scaled {
  const all = series.flatMap((s) => s.points);
  const t0 = Math.min(...all.map((p) => p.at));
  const t1 = Math.max(...all.map((p) => p.at));
  const max = Math.max(1, ...all.map((p) => p.value));
  const x = (at: number) => (t1 === t0 ? width : ((at - t0) / (t1 - t0)) * width);
  const y = (v: number) => height - (v / max) * height;
  const paths = series.map((s) =>
    s.points.map((p, i) => `${i === 0 ? "M" : "L"}${x(p.at).toFixed(1)},${y(p.value).toFixed(1)}`).join(" "),
  );
  return { width, height, max, from: t0, to: t1, paths };
}

const SVG = "http://www.w3.org/2000/svg";

function svg(tag: string, attrs: Record<string, string | number>): SVGElement {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

export function lineChart(title: string, series: Series[]): HTMLElement {
  const nonEmpty = series.filter((s) => s.points.length > 0);
  if (nonEmpty.length === 0) return h("p", { class: "empty" }, `${title}: no samples yet.`);
  const { width, height, max, from, to, paths } = scale(nonEmpty, 600, 160);
  const time = (ms: number) => new Date(ms).toLocaleTimeString();
  const root = svg("svg", { viewBox: `0 0 ${width} ${height + 4}`, role: "img", "aria-label": title, class: "chart", preserveAspectRatio: "none" });
  root.append(svg("line", { x1: 0, y1: height, x2: width, y2: height, stroke: "#767676", "vector-effect": "non-scaling-stroke" }));
  nonEmpty.forEach((s, i) => {
    const line = svg("path", { d: paths[i], fill: "none", stroke: s.colour, "stroke-width": 2, "vector-effect": "non-scaling-stroke" });
    if (s.dashed) line.setAttribute("stroke-dasharray", "6 4");
    root.append(line);
  });
  const latest = nonEmpty.map((s) => `${s.name} ${s.points[s.points.length - 1].value}`).join(", ");
  return h(
    "figure",
    { class: "chart-box" },
    root,
    h(
      "figcaption",
      {},
      `${title} (0–${max}), ${time(from)} to ${time(to)}. Latest: ${latest}. `,
      nonEmpty.map((s) => h("span", { class: "legend" }, h("span", { class: "swatch", style: `background:${s.colour}` }), s.name)),
    ),
  );
}
