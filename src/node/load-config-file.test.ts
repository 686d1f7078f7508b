import { mkdtempSync, writeFileSync } from "node:fs";
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

// PowerShell 5's `Out-File -Encoding utf8` (and Notepad before 2019) starts the file with a byte
// order mark; JSON.parse refused it with "Unexpected token '﻿'", a character no editor shows.
describe("a config file saved with a UTF-8 byte order mark", () => {
  it("is read as the JSON it holds", () => {
    const path = join(mkdtempSync(join(tmpdir(), "tollgate-config-")), "tollgate.json");
    writeFileSync(path, '\uFEFF{"providers": {}}');
    expect(readConfigFile(path)).toEqual({ providers: {} });
  });
});
