// A few lines instead of a framework: views build DOM nodes with h() and replace their
// container's children when data arrives.

type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | EventListener | null | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2).toLowerCase(), value);
    } else if (value === true) {
      el.setAttribute(key, "");
    } else {
      el.setAttribute(key, String(value));
    }
  }
  append(el, children);
  return el;
}

export function append(el: Element, children: (Child | Child[])[]): void {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
}

/// Replaces `el`'s children, keeping in place those it already starts with (a view's heading):
/// a node taken out of the document loses focus, even when put straight back.
export function replace(el: Element, ...children: (Child | Child[])[]): void {
  const next = children.flat();
  let kept = 0;
  while (kept < next.length && kept < el.childNodes.length && next[kept] === el.childNodes[kept]) kept++;
  while (el.childNodes.length > kept) el.lastChild?.remove();
  append(el, next.slice(kept));
}

/// A link handled by the router (no page load).
export function link(href: string, ...children: Child[]): HTMLAnchorElement {
  return h("a", { href, "data-route": true }, ...children);
}
