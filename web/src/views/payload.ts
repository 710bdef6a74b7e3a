// A message body or invocation payload as a person reads it: JSON pretty-printed, base64
// decoded where it is text. Shared by the invocation explorer and the poison messages, which
// show the same bodies (a queue message is base64 when the app's `messageEncoding` says so).

export interface Decoded {
  /// What the text is: `JSON`, `text`, or either "decoded from base64".
  kind: string;
  text: string;
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/// Base64 that decodes to UTF-8 text, or null. Short words (`test`, `ship`) are valid base64
/// too, so text is taken as base64 only when it decodes to printable text.
function fromBase64(text: string): string | null {
  const compact = text.trim();
  if (compact.length < 8 || compact.length % 4 !== 0 || !BASE64.test(compact)) return null;
  let binary: string;
  try {
    binary = atob(compact);
  } catch {
    return null;
  }
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  let decoded: string;
  try {
    decoded = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
  // Control characters other than whitespace mean binary that happens to be valid UTF-8.
  return /[\u0000-\u0008\u000e-\u001f\u007f]/.test(decoded) ? null : decoded;
}

function asJson(text: string): string | null {
  const trimmed = text.trim();
  if (!trimmed.startsWith("{") && !trimmed.startsWith("[")) return null;
  try {
    return JSON.stringify(JSON.parse(trimmed), null, 2);
  } catch {
    return null;
  }
}

/// The payload as a person reads it: JSON pretty-printed, base64 decoded where it is text.
/// A payload cut short stays as it came (cut JSON does not parse).
export function decodePayload(payload: string): Decoded {
  const json = asJson(payload);
  if (json !== null) return { kind: "JSON", text: json };
  const decoded = fromBase64(payload);
  if (decoded !== null) {
    const inner = asJson(decoded);
    return inner !== null
      ? { kind: "JSON, decoded from base64", text: inner }
      : { kind: "text, decoded from base64", text: decoded };
  }
  return { kind: "text", text: payload };
}
