import { describe, expect, it } from "vitest";
import { clusterSeeds, RedisUrlError, singleServerUrl } from "./redis-connection.ts";

describe("clusterSeeds", () => {
  it("reads every seed node of a comma-separated list, with the first one's credentials", () => {
    expect(clusterSeeds("redis://app:s%40cret@10.0.0.1:7000, redis://10.0.0.2:7001,redis://cache.internal,10.0.0.4:7003")).toEqual({
      nodes: [
        { host: "10.0.0.1", port: 7000 },
        { host: "10.0.0.2", port: 7001 },
        { host: "cache.internal", port: 6379 },
        { host: "10.0.0.4", port: 7003 },
      ],
      credentials: { username: "app", password: "s@cret" },
    });
  });

  it("takes TLS from rediss:// and IPv6 hosts without their brackets", () => {
    expect(clusterSeeds("rediss://:pw@[::1]:6380/0")).toEqual({ nodes: [{ host: "::1", port: 6380 }], credentials: { password: "pw", tls: {} } });
  });

  it.each([
    ["", /the variable is empty/],
    [" , ", /the variable is empty/],
    ["tcp://10.0.0.1:6379", /"tcp:\/\/10\.0\.0\.1:6379" is not a redis:\/\/ or rediss:\/\/ URL/],
    ["10.0.0.1:port", /"10\.0\.0\.1:port" is not a URL; write each seed node as redis:\/\/host:port/],
    ["redis://10.0.0.1:6379/2", /"redis:\/\/10\.0\.0\.1:6379\/2" has a path; a Redis Cluster has only database 0, so drop it/],
    ["https://admin:hunter2@10.0.0.1", /"https:\/\/\*\*\*@10\.0\.0\.1" is not a redis:\/\/ or rediss:\/\/ URL/],
    // A password with "/" (unencoded base64) makes the URL unparsable; one with "@" splits oddly.
    ["redis://default:hunter2/x+y@10.0.0.1:6379", /"redis:\/\/\*\*\*@10\.0\.0\.1:6379" is not a URL/],
    ["redis://default:hun@ter2@10.0.0.1:6379/3", /"redis:\/\/\*\*\*@10\.0\.0\.1:6379\/3" has a path/],
  ])("refuses %j, saying what to write", (list, message) => {
    expect(() => clusterSeeds(list)).toThrow(RedisUrlError);
    expect(() => clusterSeeds(list)).toThrow(message);
    expect(() => clusterSeeds(list)).not.toThrow(/hunter2|hun|ter2/);
  });
});

describe("singleServerUrl", () => {
  it("takes a redis:// or rediss:// URL as written, with a database, and a bare host:port as redis://", () => {
    expect(singleServerUrl("redis://app:s%40cret@10.0.0.1:6379/2")).toBe("redis://app:s%40cret@10.0.0.1:6379/2");
    expect(singleServerUrl("rediss://cache.internal:6380")).toBe("rediss://cache.internal:6380");
    expect(singleServerUrl(" 10.0.0.1:6379 ")).toBe("redis://10.0.0.1:6379");
  });

  // ioredis read http://cache:6380 as host "http", port 6379, and a list of seeds as "Invalid URL".
  it.each([
    ["redis://10.0.0.1:7000,redis://10.0.0.2:7001", /lists several nodes \(a comma\): for a Redis Cluster add "cluster": true to "store"/],
    ["http://cache:6380", /"http:\/\/cache:6380" is not a redis:\/\/ or rediss:\/\/ URL/],
    ["redis://cache:6379/first", /has a path that is not a database number; write redis:\/\/host:port, with \/N for database N/],
    ["redis://default:hunter2/x+y@10.0.0.1:6379", /"redis:\/\/\*\*\*@10\.0\.0\.1:6379" is not a URL/],
  ])("refuses %j, saying what to write", (url, message) => {
    expect(() => singleServerUrl(url)).toThrow(RedisUrlError);
    expect(() => singleServerUrl(url)).toThrow(message);
    expect(() => singleServerUrl(url)).not.toThrow(/hunter2/);
  });
});

describe("singleServerUrl, for what ioredis took besides URLs", () => {
  it("passes a Unix socket's path and a port alone on as written, and a comma inside a password", () => {
    expect(singleServerUrl("/var/run/redis/redis.sock")).toBe("/var/run/redis/redis.sock");
    expect(singleServerUrl("/tmp/redis.sock?db=2")).toBe("/tmp/redis.sock?db=2");
    expect(singleServerUrl("6379")).toBe("6379");
    expect(singleServerUrl("redis://:pa,ss@cache:6379")).toBe("redis://:pa,ss@cache:6379");
  });
});

// A mistyped scheme (`redis//`, `redis:/`) made the URL parser read host "redis" and the rest as a
// path, password included, which the error then quoted (found by review); and a bare "%" in a
// password met ioredis's own "URI malformed", which named neither the setting nor the fix.
describe("a Redis URL mistyped around its password", () => {
  it.each(["redis//:hunter2@cache:6379", "redis:/:hunter2@cache:6379", "rediss//app:hunter2@cache:6380"])("%j: the scheme is named as the fault, the password never printed", (url) => {
    for (const read of [singleServerUrl, clusterSeeds]) {
      expect(() => read(url)).toThrow(/misspells the scheme; write redis:\/\/host:port/);
      expect(() => read(url)).not.toThrow(/hunter2/);
    }
  });

  it("a bare % in the password: says to percent-encode it, without printing it", () => {
    for (const read of [singleServerUrl, clusterSeeds]) {
      expect(() => read("redis://:hunter2%zz@127.0.0.1:6379")).toThrow(/a "%" that is not percent-encoding; write "%" as %25/);
      expect(() => read("redis://:hunter2%zz@127.0.0.1:6379")).not.toThrow(/hunter2/);
    }
  });
});

describe("Redis URLs found by review of the redaction", () => {
  // `redis/2` is host "redis" (a compose service's name) and database 2, as ioredis reads it.
  it("a bare host named redis with a database is not taken for a misspelt scheme", () => {
    expect(singleServerUrl("redis/2")).toBe("redis://redis/2");
    expect(singleServerUrl("redis:6379/2")).toBe("redis://redis:6379/2");
  });

  // The list is split at commas, so a password with one was cut, and the piece before its "@"
  // ("redis://app:hun") was quoted whole.
  it("a cluster seed list whose password holds a comma: no piece of it is quoted", () => {
    expect(() => clusterSeeds("redis://app:hun,ter2@10.0.0.1:7000")).toThrow(RedisUrlError);
    expect(() => clusterSeeds("redis://app:hun,ter2@10.0.0.1:7000")).not.toThrow(/hun|ter2/);
  });
});
