// A line chart in plain SVG: a few series over time, each its own colour and name, on a value
// axis from 0 with its unit and gridlines, a time axis, a tooltip (an SVG <title>) for every
// moment, and a caption that says the range and the latest values for screen readers. A value
// of null is a gap: the line breaks there rather than joining its neighbours, and a point with
// no neighbour is drawn as a dot, so one minute of data is visible. No chart library to bundle.

import { h } from "../../dom";

export interface Point {
  at: number;
  /// Null: nothing to show at this moment (the line breaks).
  value: number | null;
}

export interface Series {
  name: string;
  colour: string;
  points: Point[];
  /// Dashed, so a series drawn over another (placed over desired) leaves it visible.
  dashed?: boolean;
}

export interface ChartOptions {
  /// What the values count, for the axis and the caption: "invocations per minute", "ms".
  unit: string;
  /// A sentence under the chart: what the values are and are not.
  note?: string;
}

export interface Scaled {
  width: number;
  height: number;
  /// The value axis' top: a round number at or above the largest value (at least 1).
  max: number;
  /// The largest value shown (0 when none).
  highest: number;
  /// The time range shown, in milliseconds since the epoch.
  from: number;
  to: number;
  /// Per series: its lines, broken at gaps.
  paths: string[];
  /// Per series: points with no neighbour to join, drawn as dots.
  dots: string[];
}

/// The smallest of 1, 2, 5 × 10ⁿ at or above `value` (at least 1): the axis' top.
export function niceMax(value: number): number {
  if (!(value > 1)) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) {
    if (step * magnitude >= value) return step * magnitude;
  }
  return 10 * magnitude;
}

/// Maps every series onto one box: time on x (shared range), values on y from 0 to a round top.
export function scale(series: Series[], width: number, height: number): Scaled {
  const all = series.flatMap((s) => s.points);
  const values = all.flatMap((p) => (p.value === null ? [] : [p.value]));
  const t0 = Math.min(...all.map((p) => p.at));
  const t1 = Math.max(...all.map((p) => p.at));
  const highest = Math.max(0, ...values);
  const max = niceMax(highest);
  // One moment only: in the middle, not against an edge.
  const x = (at: number) => (t1 === t0 ? width / 2 : ((at - t0) / (t1 - t0)) * width);
  const y = (v: number) => height - (v / max) * height;
  const xy = (p: Point) => `${x(p.at).toFixed(1)},${y(p.value as number).toFixed(1)}`;
  const paths: string[] = [];
  const dots: string[] = [];
  for (const s of series) {
    const line: string[] = [];
    const lone: string[] = [];
    s.points.forEach((p, i) => {
      if (p.value === null) return;
      const before = i > 0 && s.points[i - 1].value !== null;
      const after = i + 1 < s.points.length && s.points[i + 1].value !== null;
      if (!before && !after) lone.push(`M${xy(p)} l0,0`);
      else line.push(`${before ? "L" : "M"}${xy(p)}`);
    });
    paths.push(line.join(" "));
    dots.push(lone.join(" "));
  }
  return { width, height, max, highest, from: t0, to: t1, paths, dots };
}

/// Each moment's values, for its tooltip: "10:31 · invocations 39, failures 0".
export function moments(series: Series[], unit: string): { at: number; text: string }[] {
  const times = [...new Set(series.flatMap((s) => s.points.map((p) => p.at)))].sort((a, b) => a - b);
  return times.map((at) => {
    const parts = series.map((s) => {
      const point = s.points.find((p) => p.at === at);
      return `${s.name} ${point && point.value !== null ? point.value : "no data"}`;
    });
    return { at, text: `${clock(at)} · ${parts.join(", ")} (${unit})` };
  });
}

export function clock(ms: number): string {
  return new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

function latest(s: Series): string {
  for (let i = s.points.length - 1; i >= 0; i--) {
    const value = s.points[i].value;
    if (value !== null) return `${s.name} ${value}`;
  }
  return `${s.name} no data`;
}

const SVG = "http://www.w3.org/2000/svg";

function svg(tag: string, attrs: Record<string, string | number>, text?: string): SVGElement {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

export function lineChart(title: string, series: Series[], options: ChartOptions): HTMLElement {
  const shown = series.filter((s) => s.points.length > 0);
  if (shown.length === 0) return h("p", { class: "empty" }, `${title}: no samples yet.`);
  const { width, height, max, highest, from, to, paths, dots } = scale(shown, 600, 160);
  const root = svg("svg", {
    viewBox: `0 0 ${width} ${height}`,
    role: "img",
    "aria-label": `${title}, in ${options.unit}`,
    class: "chart",
    preserveAspectRatio: "none",
  });
  const thin = { "vector-effect": "non-scaling-stroke", "stroke-width": 1 };
  for (const v of [max / 2, max]) {
    const at = height - (v / max) * height;
    root.append(svg("line", { x1: 0, y1: at, x2: width, y2: at, stroke: "#c4c6cf", "stroke-dasharray": "2 3", ...thin }));
  }
  root.append(svg("line", { x1: 0, y1: height, x2: width, y2: height, stroke: "#767676", ...thin }));
  root.append(svg("line", { x1: 0, y1: 0, x2: 0, y2: height, stroke: "#767676", ...thin }));
  shown.forEach((s, i) => {
    const line = svg("path", { d: paths[i], fill: "none", stroke: s.colour, "stroke-width": 2, "vector-effect": "non-scaling-stroke" });
    if (s.dashed) line.setAttribute("stroke-dasharray", "6 4");
    // Round caps on zero-length segments: dots that stay round however the box stretches.
    const dot = svg("path", { d: dots[i], fill: "none", stroke: s.colour, "stroke-width": 7, "stroke-linecap": "round", "vector-effect": "non-scaling-stroke" });
    root.append(line, dot);
  });
  // A band per moment, reaching halfway to its neighbours, carries that moment's tooltip.
  const marks = moments(shown, options.unit);
  const px = (at: number) => (to === from ? width / 2 : ((at - from) / (to - from)) * width);
  marks.forEach((m, i) => {
    const left = i === 0 ? 0 : (px(marks[i - 1].at) + px(m.at)) / 2;
    const right = i === marks.length - 1 ? width : (px(m.at) + px(marks[i + 1].at)) / 2;
    const band = svg("rect", { x: left, y: 0, width: Math.max(right - left, 0.5), height, fill: "transparent", class: "moment" });
    band.append(svg("title", {}, m.text));
    root.append(band);
  });
  const middle = from + (to - from) / 2;
  return h(
    "figure",
    { class: "chart-box" },
    h("div", { class: "chart-unit", "aria-hidden": "true" }, options.unit),
    h(
      "div",
      { class: "chart-plot" },
      h("div", { class: "chart-y", "aria-hidden": "true" }, h("span", {}, max), h("span", {}, max / 2), h("span", {}, 0)),
      root,
      h(
        "div",
        { class: "chart-x", "aria-hidden": "true" },
        h("span", {}, clock(from)),
        to === from ? null : h("span", {}, clock(middle)),
        to === from ? null : h("span", {}, clock(to)),
      ),
    ),
    h(
      "figcaption",
      {},
      `${title}, ${clock(from)} to ${clock(to)}; highest ${highest} ${options.unit}. Latest: ${shown.map(latest).join(", ")}. `,
      options.note ? h("span", { class: "hint" }, `${options.note} `) : null,
      shown.map((s) =>
        h("span", { class: "legend" }, h("span", { class: `swatch${s.dashed ? " dashed" : ""}`, style: `border-color:${s.colour}` }), s.name),
      ),
    ),
  );
}
