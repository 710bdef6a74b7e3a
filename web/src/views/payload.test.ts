import { describe, expect, it } from "vitest";
import { decodePayload } from "./payload";

describe("payload decoding", () => {
  it("pretty-prints JSON and keeps plain text", () => {
    expect(decodePayload('{"order":42}')).toEqual({ kind: "JSON", text: '{\n  "order": 42\n}' });
    expect(decodePayload("hello world")).toEqual({ kind: "text", text: "hello world" });
    // A short word is valid base64 but is text.
    expect(decodePayload("test").kind).toBe("text");
  });
  it("decodes base64 where it is text or JSON, not binary", () => {
    expect(decodePayload(btoa('{"order":42}'))).toEqual({
      kind: "JSON, decoded from base64",
      text: '{\n  "order": 42\n}',
    });
    expect(decodePayload(btoa("ship order 42"))).toEqual({
      kind: "text, decoded from base64",
      text: "ship order 42",
    });
    const binary = btoa(String.fromCharCode(0, 1, 2, 3, 4, 5, 6, 7, 8));
    expect(decodePayload(binary)).toEqual({ kind: "text", text: binary });
  });
  it("shows JSON cut short as the text it is", () => {
    expect(decodePayload('{"order":4')).toEqual({ kind: "text", text: '{"order":4' });
  });
});
