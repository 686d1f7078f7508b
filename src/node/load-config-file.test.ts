import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readConfigFile } from "./load-config-file.ts";

// "cannot read config file walk/nope.json: ENOENT" named neither the full path nor what to check.

describe("a config file that cannot be read", () => {
  it("names its full path, why in words, and where the path came from", () => {
    const directory = mkdtempSync(join(tmpdir(), "tollgate-config-"));
    expect(() => readConfigFile(join(directory, "nope.json"))).toThrow(`cannot read config file ${join(directory, "nope.json")}: no such file; check --config or TOLLGATE_CONFIG`);
    expect(() => readConfigFile(directory)).toThrow(`cannot read config file ${directory}: it is a directory; check --config or TOLLGATE_CONFIG`);
  });
});
