import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ANTHROPIC_KEY, OPENAI_KEY, testConfig } from "../../test/support/gateway.ts";
import { useRedis } from "../../test/support/use-redis.ts";
import { startGateway } from "./serve.ts";

// Where the stores keep files: a path the gateway cannot write stops start-up naming the setting,
// the path and the fix, as the config's other start-up errors do.

const env = { OPENAI_API_KEY: OPENAI_KEY, ANTHROPIC_API_KEY: ANTHROPIC_KEY };
const directory = mkdtempSync(join(tmpdir(), "tollgate-store-path-"));

/** How start-up with `store` ended: its error's message, or "started" (then closed). */
async function startWith(store: object, moreEnv: Record<string, string> = {}): Promise<string> {
  try {
    const gateway = await startGateway({ config: { ...testConfig(), store }, port: 0, env: { ...env, ...moreEnv }, log: () => {} });
    await gateway.close({ drainMs: 0 });
    return "started";
  } catch (error) {
    return (error as Error).message;
  }
}

describe("store.path", () => {
  // Was: Node's "EISDIR: illegal operation on a directory, read", naming neither.
  it("a directory stops start-up naming store.path, the path and a file to name instead", async () => {
    const path = join(directory, "ledger-dir.jsonl");
    mkdirSync(path);
    expect(await startWith({ path })).toBe(`invalid tollgate config:\n  - store.path: ${path} is a directory; name a file in it, such as ${join(path, "ledger.jsonl")}`);
  });

  // Was: "EEXIST: file already exists, mkdir ...".
  it("under a plain file stops start-up naming store.path and the path", async () => {
    const file = join(directory, "plain-file");
    writeFileSync(file, "");
    const path = join(file, "ledger.jsonl");
    expect(await startWith({ path })).toBe(`invalid tollgate config:\n  - store.path: ${path} cannot be created: part of the path above it is a file, not a directory; name a file in a directory`);
  });

  it("a file that can be written starts", async () => {
    expect(await startWith({ path: join(directory, "fine", "ledger.jsonl") })).toBe("started");
  });
});

describe("store.path on Redis", () => {
  const redis = useRedis("store-path-on-redis");

  // Its directory is where a gateway keeps what it cannot write during an outage. Was: a directory
  // it could not write (a read-only root filesystem; here one under a plain file, as root may
  // write anywhere) started without a word, and a stop during an outage lost the records.
  it("whose directory cannot be written stops start-up, naming it and what it is for", async () => {
    const file = join(directory, "plain-file-on-redis");
    writeFileSync(file, "");
    const path = join(file, "ledger.jsonl");
    const failure = await startWith({ redisUrl: { env: "REDIS_URL" }, keyPrefix: redis.prefix, path }, { REDIS_URL: redis.url });
    expect(failure).toBe(
      `invalid tollgate config:\n  - store.path: ${path} cannot be created: part of the path above it is a file, not a directory; name a file in a directory. ` +
        "On Redis its directory is where a gateway keeps the cost records and budget settlements it cannot write during an outage",
    );
  });

  it("whose directory can be written starts, and leaves nothing there", async () => {
    const kept = join(directory, "kept-on-redis");
    expect(await startWith({ redisUrl: { env: "REDIS_URL" }, keyPrefix: redis.prefix, path: join(kept, "ledger.jsonl") }, { REDIS_URL: redis.url })).toBe("started");
    expect(readdirSync(kept)).toEqual([]);
  });
});
