import { describe, expect, it } from "vitest";
import { oneLine } from "./one-line.ts";

describe("oneLine", () => {
  it("writes every line break (CRLF, lone CR, LF) as a visible \\n, so one event stays one line", () => {
    expect(oneLine("a\r\nb\rc\nd")).toBe("a\\nb\\nc\\nd");
  });

  it("leaves a line without breaks as it is", () => {
    expect(oneLine("[tollgate] listening on http://127.0.0.1:8787")).toBe("[tollgate] listening on http://127.0.0.1:8787");
  });
});
