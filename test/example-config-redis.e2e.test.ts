// `REDIS_URL=… npm start` with the bundled example config keeps its state in Redis, as the
// brief says ("State lives in Redis … once REDIS_URL is set"): config/example.json names
// REDIS_URL as its store. It used to have no store section, so the variable was ignored.
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedis, type RedisHandle } from "./support/redis-server.ts";

const BIN = fileURLToPath(new URL("../bin/tollgate.mjs", import.meta.url));

let redis: RedisHandle;
let workdir: string;
beforeAll(async () => {
  redis = await startRedis({ privateServer: true });
  workdir = await mkdtemp(join(tmpdir(), "tollgate-docs-review-"));
});
afterAll(async () => {
  await redis?.stop();
  if (workdir) await rm(workdir, { recursive: true, force: true });
});

describe("npm start with REDIS_URL set and no config of one's own", () => {
  it("keeps its cost records in Redis, not in the embedded file store", async () => {
    // Run from a scratch directory so the embedded store (if used) does not write into the repo.
    const child = spawn("node", [BIN], {
      cwd: workdir,
      env: { PATH: process.env.PATH ?? "", PORT: "0", HOST: "127.0.0.1", REDIS_URL: redis.url },
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      let log = "";
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no listening line:\n${log}`)), 20_000);
        child.stderr.on("data", (chunk) => {
          log += chunk;
          if (/listening on http/.test(log)) {
            clearTimeout(timer);
            resolve();
          }
        });
        child.on("exit", (code) => reject(new Error(`exited ${code}:\n${log}`)));
      });
      expect(log).toContain("cost records go to Redis");
      expect(log).not.toContain("ledger.jsonl");
    } finally {
      child.kill("SIGTERM");
    }
  });
});
