import { describe, expect, it } from "vitest";
import { keptFilesTag } from "./kept-files-tag.ts";

describe("the store's tag in its kept files' names", () => {
  it("is the same for the same servers and prefix, however the URL is written", () => {
    const tag = keptFilesTag("redis://cache:6379/0", false, "prod:");
    expect(tag).toMatch(/^[0-9a-f]{12}$/);
    expect(keptFilesTag("redis://:old-password@cache", false, "prod:")).toBe(tag);
    expect(keptFilesTag("cache:6379", false, "prod:")).toBe(tag);
    expect(keptFilesTag("redis://b:7001,redis://a:7000", true, "")).toBe(keptFilesTag("a:7000, redis://user:pw@b:7001", true, ""));
  });

  it("differs for another prefix, server, port or database", () => {
    const tag = keptFilesTag("redis://cache:6379", false, "prod:");
    expect(new Set([tag, keptFilesTag("redis://cache:6379", false, "staging:"), keptFilesTag("redis://other:6379", false, "prod:"), keptFilesTag("redis://cache:6380", false, "prod:"), keptFilesTag("redis://cache:6379/1", false, "prod:")]).size).toBe(5);
  });
});
