// What earlier gateways kept (unwritten-*.jsonl) is tried again every `replayRetryMs` while the
// store refuses it. A try under way when close() ran (against a silent store each lasts the 2 s
// command timeout) armed a new timer after close: the closed gateway went on replaying the shared
// directory for ever (found by the review of that change). Once close() has resolved, nothing of
// the gateway runs any more.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway } from "../src/node/serve.ts";
import { makeCostRecord } from "./support/cost-records.ts";
import { ANTHROPIC_KEY, OPENAI_KEY, testConfig } from "./support/gateway.ts";
import { startPartitionableProxy } from "./support/ops-rig.ts";
import { startRedis, uniquePrefix, type RedisHandle } from "./support/redis-server.ts";

let redis: RedisHandle;
let proxy: Awaited<ReturnType<typeof startPartitionableProxy>>;
let directory = "";
const EARLIER = "00000000-0000-4000-8000-0000000000e1";

beforeAll(async () => {
  redis = await startRedis({ privateServer: true });
  proxy = await startPartitionableProxy(redis.url);
  directory = await mkdtemp(join(tmpdir(), "tollgate-replay-after-close-"));
});
afterAll(async () => {
  await proxy?.close();
  await redis?.stop();
  await rm(directory, { recursive: true, force: true });
});

describe("the kept-records replay loop", () => {
  it("does not go on after close()", async () => {
    // Something under a kept file's name that can never be replayed (here a directory: EISDIR),
    // so that the start-up replay fails and the retry loop runs. Names of files kept before they
    // named their store (a bare uuid), which any gateway replays.
    await mkdir(join(directory, "unwritten-00000000-0000-4000-8000-000000000001.jsonl"));
    const logs: string[] = [];
    const gateway = await startGateway({
      config: { ...testConfig(), store: { redisUrl: { env: "REDIS_URL" }, keyPrefix: uniquePrefix("replay-after-close"), path: join(directory, "ledger.jsonl") } },
      env: { OPENAI_API_KEY: OPENAI_KEY, ANTHROPIC_API_KEY: ANTHROPIC_KEY, REDIS_URL: proxy.url },
      port: 0,
      upstreamTransport: "fetch",
      replayRetryMs: 100,
      log: (line) => logs.push(line),
    });
    // The store goes silent, and a file an earlier gateway kept is there: each replay now waits
    // its 2 s command timeout on it, and fails.
    proxy.partition();
    await writeFile(join(directory, `unwritten-${EARLIER}.jsonl`), JSON.stringify(makeCostRecord()) + "\n");
    const failures = () => logs.filter((line) => line.includes("could not write the cost records kept in") && line.includes(EARLIER)).length;
    for (let i = 0; i < 100 && failures() < 1; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(failures()).toBeGreaterThanOrEqual(1);
    // Close while the next replay is in flight (it started 100 ms after the last failure).
    await new Promise((resolve) => setTimeout(resolve, 300));
    await gateway.close({ drainMs: 100 });
    // The replay that was in flight may still end (and log) once; after that, nothing.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const afterClose = failures();
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    expect(failures() - afterClose, logs.slice(-6).join("\n")).toBe(0);
  }, 60_000);
});
