import { createWriteStream } from "node:fs";
import { once } from "node:events";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { constants as bufferConstants } from "node:buffer";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeCostRecord } from "../../test/support/cost-records.ts";
import { useRedis } from "../../test/support/use-redis.ts";
import { FileLedgerStore, readLedgerFile } from "./file-ledger-store.ts";
import { RecentIds } from "../runtime/recent-ids.ts";
import { Ledger } from "./ledger.ts";
import { COST_RECORD_LOG_TYPE, LogLedgerStore } from "./log-ledger-store.ts";
import type { LedgerStore } from "./ledger-store.ts";
import { RedisLedgerStore } from "./redis-ledger-store.ts";

describe("Redis ledger (real redis-server)", () => {
  const rig = useRedis("ledger");

  it("writes the record and its aggregates, and a replayed write changes nothing", async () => {
    const store = new RedisLedgerStore(rig.redis, rig.prefix);
    const first = makeCostRecord({ requestId: "req_a" });
    const second = makeCostRecord({
      requestId: "req_b",
      status: "error",
      usage: { inputTokens: 0, cacheReadTokens: 0, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0, outputTokens: 0, reasoningTokens: 0 },
      cost: { inputNano: 0, cacheReadNano: 0, cacheWriteNano: 0, outputNano: 0, totalNano: 0, cacheSavingsNano: 0 },
    });
    const other = makeCostRecord({ requestId: "req_c", route: "claude", provider: "anthropic", model: "claude-sonnet-4-6", time: "2026-11-23T00:00:01.000Z" });
    await store.write([first, second, other]);
    await store.write([first, second]); // the retry of a batch that did land

    expect((await store.records("2026-11-22")).map((record) => record.requestId)).toEqual(["req_a", "req_b"]);
    expect(await store.records("2026-11-22")).toContainEqual(first);

    const totals = Object.fromEntries(
      (await store.totals("2026-11-22")).map(({ dimensions, metric, value }) => [`${dimensions.route}/${dimensions.model}/${metric}`, value]),
    );
    expect(totals).toEqual({
      "gpt/gpt-4o/requests": 2,
      "gpt/gpt-4o/errors": 1,
      "gpt/gpt-4o/input_tokens": 176,
      "gpt/gpt-4o/cache_read_tokens": 1024,
      "gpt/gpt-4o/output_tokens": 42,
      "gpt/gpt-4o/cost_nano": 2_140_000,
      "gpt/gpt-4o/cache_savings_nano": 1_280_000,
    });
    // The next day's record went to the next day's keys.
    expect((await store.totals("2026-11-23")).find((total) => total.metric === "cost_nano")?.value).toBe(2_140_000);
  });

  it("writes a record whole or not at all, and sets aside one it can never add up instead of retrying it for ever", async () => {
    // Used to be wrong: the script SET the record, then its HINCRBYs failed at the first value past
    // 64 bits; Redis keeps what ran, and every retry skipped the record (its key existed) with
    // part of its sums missing. Refused whole, such a record must not then hold up the queue.
    const store = new RedisLedgerStore(rig.redis, `${rig.prefix}whole:`);
    const fine = makeCostRecord({ requestId: "fine" });
    const absurd = makeCostRecord({ requestId: "absurd", cost: { inputNano: 4.6e22, cacheReadNano: 0, cacheWriteNano: 0, outputNano: 0, totalNano: 4.6e22, cacheSavingsNano: 0 } });
    const after = makeCostRecord({ requestId: "after" });
    const log: string[] = [];
    const ledger = new Ledger({ store, log: (line) => log.push(line), schedule: () => undefined });
    for (const record of [fine, absurd, after]) ledger.record(record);
    await ledger.flush();
    expect(ledger.pending).toBe(0);
    expect((await store.records("2026-11-22")).map((record) => record.requestId)).toEqual(["fine", "after"]);
    const totals = Object.fromEntries((await store.totals("2026-11-22")).map(({ metric, value }) => [metric, value]));
    expect(totals).toMatchObject({ requests: 2, cost_nano: 4_280_000 });
    // Set aside whole in the log, where nothing of it is lost.
    expect(log).toHaveLength(1);
    expect(log[0]).toMatch(/^\[tollgate\] error: cost record absurd cannot be written \(its cost_nano of 4\.6e\+22 is not an exact integer\); set aside: \{/);
    expect(JSON.parse(log[0]!.slice(log[0]!.indexOf("set aside: ") + 11))).toEqual(absurd);
  });

  it("keeps every key of a day in one Redis Cluster slot (a shared hash tag)", () => {
    const keys = new RedisLedgerStore(rig.redis, rig.prefix).keysFor("2026-11-22");
    const tags = [keys.record("req_x"), keys.records, keys.totals].map((key) => /\{([^}]*)\}/.exec(key)?.[1]);
    expect(new Set(tags)).toEqual(new Set(["tollgate:2026-11-22"]));
  });

  it("a batch is one script call per day, with no read-before-write", async () => {
    const store = new RedisLedgerStore(rig.redis, `${rig.prefix}rt:`);
    const monitor = await rig.redis.monitor();
    const commands: string[] = [];
    monitor.on("monitor", (_time: number, args: string[]) => commands.push(String(args[0]).toLowerCase()));
    const nextDay = makeCostRecord({ time: "2026-11-23T00:00:01.000Z" });
    await store.write([makeCostRecord(), makeCostRecord(), nextDay, makeCostRecord()]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    monitor.disconnect();
    // A script per day's records and nothing else: no read-before-write, no per-field calls from the client.
    expect(commands.filter((command) => command.startsWith("eval"))).toHaveLength(2);
    expect(commands.filter((command) => command === "set")).toHaveLength(4);
    expect(commands.filter((command) => !command.startsWith("eval") && !["set", "rpush", "hincrby"].includes(command))).toEqual([]);
  });
});

describe("Redis ledger: a large batch", () => {
  const rig = useRedis("ledger-large");
  it("is cut into script calls of 64 records, and every record lands", async () => {
    const store = new RedisLedgerStore(rig.redis, `${rig.prefix}big:`);
    const records = Array.from({ length: 150 }, (_, index) => makeCostRecord({ requestId: `req_big${index}` }));
    const monitor = await rig.redis.monitor();
    let calls = 0;
    monitor.on("monitor", (_time: number, args: string[]) => (calls += String(args[0]).toLowerCase().startsWith("eval") ? 1 : 0));
    await store.write(records);
    await new Promise((resolve) => setTimeout(resolve, 50));
    monitor.disconnect();
    expect(calls).toBe(3);
    expect((await store.records("2026-11-22")).map((record) => record.requestId)).toEqual(records.map((record) => record.requestId));
    expect((await store.totals("2026-11-22")).find((total) => total.metric === "requests")?.value).toBe(150);
  });
});

describe("file ledger (the embedded store)", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "tollgate-ledger-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("keeps records across a reopen and skips ids it already holds", async () => {
    const path = join(dir, "nested", "ledger.jsonl");
    const a = makeCostRecord({ requestId: "req_1" });
    await (await FileLedgerStore.open(path)).write([a]);
    const reopened = await FileLedgerStore.open(path);
    await reopened.write([a, makeCostRecord({ requestId: "req_2" })]);
    expect((await readLedgerFile(path)).map((record) => record.requestId)).toEqual(["req_1", "req_2"]);
  });

  it("reads the first record of a file an editor saved with a byte order mark (used to be skipped)", async () => {
    const path = join(dir, "bom.jsonl");
    await writeFile(path, "\uFEFF" + [makeCostRecord({ requestId: "req_first" }), makeCostRecord({ requestId: "req_second" })].map((line) => JSON.stringify(line) + "\n").join(""));
    expect((await readLedgerFile(path)).map((record) => record.requestId)).toEqual(["req_first", "req_second"]);
  });

  it("survives a torn last line from a crash mid-append", async () => {
    const path = join(dir, "torn.jsonl");
    await writeFile(path, JSON.stringify(makeCostRecord({ requestId: "req_whole" })) + "\n" + '{"requestId":"req_torn","ti');
    await (await FileLedgerStore.open(path)).write([makeCostRecord({ requestId: "req_next" })]);
    expect((await readLedgerFile(path)).map((record) => record.requestId)).toEqual(["req_whole", "req_next"]);
    expect((await readFile(path, "utf8")).split("\n").at(-2)).toContain("req_next");
  });

  it("rejects, and lets go of the file, when reading a record fails (instead of an uncaught exception)", async () => {
    const path = join(dir, "odd.jsonl");
    // `{}` is no record and is skipped; the visitor's own failure on a record must reject.
    await writeFile(path, [makeCostRecord({ requestId: "req_ok" }), {}, makeCostRecord({ requestId: "req_odd" })].map((line) => JSON.stringify(line) + "\n").join(""));
    const visit = (record: { requestId?: string }) => {
      if (record.requestId === "req_odd") throw new Error("not a cost record");
    };
    await expect(FileLedgerStore.open(path, { follower: { add: visit } })).rejects.toThrow("not a cost record");
  });

  it("opens a ledger larger than the longest string V8 allows (a busy day's file), reading every record once", async () => {
    // Before, the file was read as one string: past 2^29 − 24 characters the gateway could not start.
    const path = join(dir, "big.jsonl");
    const out = createWriteStream(path);
    // Records padded to about 64 kB each keep the count (and the test's time) down; the size is what matters.
    const padding = "x".repeat(64_000);
    let bytes = 0;
    let count = 0;
    while (bytes <= bufferConstants.MAX_STRING_LENGTH) {
      const line = JSON.stringify(makeCostRecord({ requestId: `req_${count++}`, warnings: [padding] })) + "\n";
      bytes += line.length;
      if (!out.write(line)) await once(out, "drain");
    }
    out.end();
    await once(out, "finish");
    try {
      expect((await stat(path)).size).toBeGreaterThan(bufferConstants.MAX_STRING_LENGTH);
      const visited: string[] = [];
      const store = await FileLedgerStore.open(path, { follower: { add: (record) => visited.push(record.requestId) } });
      expect(visited).toHaveLength(count);
      expect(visited.at(-1)).toBe(`req_${count - 1}`);
      // The ids it read make a retried write a no-op here too.
      await store.write([makeCostRecord({ requestId: `req_${count - 1}` }), makeCostRecord({ requestId: "req_new" })]);
      const last: string[] = [];
      await FileLedgerStore.open(path, { follower: { add: (record) => last.push(record.requestId) } });
      expect(last.slice(-2)).toEqual([`req_${count - 1}`, "req_new"]);
    } finally {
      await rm(path, { force: true });
    }
  }, 120_000);
});

describe("RecentIds", () => {
  it("remembers at least the latest `limit` ids and forgets the oldest", () => {
    const ids = new RecentIds(3);
    for (const id of ["a", "b", "c", "d", "e", "f", "g"]) ids.add(id);
    // The latest three are always there; ids older than twice the limit are gone.
    for (const id of ["e", "f", "g"]) expect(ids.has(id)).toBe(true);
    expect(ids.has("a")).toBe(false);
    expect(ids.has("z")).toBe(false);
  });
});

describe("Ledger queue", () => {
  it("writes after the caller's turn, batches, and retries a failed write without dropping or doubling", async () => {
    const written: string[] = [];
    let failNext = 1;
    const store: LedgerStore = {
      async write(records) {
        if (failNext-- > 0) throw new Error("connection refused");
        written.push(...records.map((record) => record.requestId));
      },
      async close() {},
    };
    const logs: string[] = [];
    const ledger = new Ledger({ store, log: (line) => logs.push(line), retryDelayMs: 5 });
    ledger.record(makeCostRecord({ requestId: "r1" }));
    ledger.record(makeCostRecord({ requestId: "r2" }));
    expect(written).toEqual([]); // nothing happens in the request's own turn
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(written).toEqual(["r1", "r2"]);
    expect(ledger.pending).toBe(0);
    expect(logs.join("\n")).toMatch(/writing 2 cost records failed \(connection refused\); retrying in 5 ms/);
  });
});

describe("Ledger queue while the store is down", () => {
  // Routes without budgets keep serving through a Redis outage, each answer adding a record. Was:
  // all of them held in memory for as long as it lasted (20,000 requests: 12.9 MB of heap, and an
  // out-of-memory kill of a busy gateway loses every one of them).
  /** A store whose every write fails, as Redis does while it is away. */
  const down: LedgerStore = {
    async write() {
      throw new Error("connect ECONNREFUSED 127.0.0.1:6379");
    },
    async close() {},
  };

  it("holds at most maxQueued records in memory, keeps the rest where keepUnwritten says, and loses none", async () => {
    const kept: string[] = [];
    const ledger = new Ledger({ store: down, log: () => {}, retryDelayMs: 60_000, maxQueued: 1_000, keepUnwritten: async (records) => (kept.push(...records.map((record) => record.requestId)), "kept.jsonl") });
    for (let index = 0; index < 5_000; index++) {
      ledger.record(makeCostRecord({ requestId: `r${index}` }));
      if (index % 100 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(ledger.pending).toBeLessThanOrEqual(1_000);
    expect(kept.length).toBeGreaterThanOrEqual(4_000);
    // Every record is in exactly one place: still queued, or kept.
    await ledger.close(0);
    expect(new Set(kept).size).toBe(5_000);
    expect(kept.length).toBe(5_000);
  });

  // Redis down and the kept file failing too (its disk full): the log is the last place left, as
  // for the embedded store on a full disk. Was: every record held in memory for as long as that
  // lasted (the keep retried every 30 s, each failure putting its records back).
  it("where records can be neither written nor kept, holds a bounded number and logs the rest whole, losing none", async () => {
    const logs: string[] = [];
    const ledger = new Ledger({ store: down, log: (line) => logs.push(line), retryDelayMs: 60_000, maxQueued: 600, keepUnwritten: async () => Promise.reject(new Error("disk full")) });
    const records = Array.from({ length: 2_000 }, (_, index) => makeCostRecord({ requestId: `r${index}` }));
    for (const [index, record] of records.entries()) {
      ledger.record(record);
      if (index % 100 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
    // One try, then a pause: not one try (and one log line) per record.
    expect(logs.filter((line) => line.includes("could not be kept (disk full)"))).toHaveLength(1);
    const setAside = logs.filter((line) => line.includes("set aside: ")).map((line) => (JSON.parse(line.slice(line.indexOf("set aside: ") + "set aside: ".length)) as { requestId: string }).requestId);
    expect(ledger.pending).toBeLessThan(1_000);
    // Every record in exactly one place: still held, or in the log.
    expect(ledger.pending + setAside.length).toBe(2_000);
    expect(new Set(setAside).size).toBe(setAside.length);
    expect(setAside.at(-1)).toBe("r1999");
  });

  // A full disk under the embedded store, which has nowhere else to keep them. Was: only "30 cost
  // records could not be written … nor kept", and what they were (key, team, cost) was gone.
  it("at close, records it can neither write nor keep go to the log whole, one line each", async () => {
    const logs: string[] = [];
    const ledger = new Ledger({ store: down, log: (line) => logs.push(line), retryDelayMs: 60_000 });
    const records = [makeCostRecord({ requestId: "req_lost_1" }), makeCostRecord({ requestId: "req_lost_2" })];
    for (const record of records) ledger.record(record);
    expect(await ledger.close(0)).toEqual({ lost: 2 });
    const setAside = logs.filter((line) => line.includes("set aside: ")).map((line) => JSON.parse(line.slice(line.indexOf("set aside: ") + "set aside: ".length)));
    expect(setAside).toEqual(records);
    expect(logs.at(-1)).toBe("[tollgate] error: 2 cost records could not be written before shutdown, nor kept (nowhere to keep them); each is in a log line above, whole");
  });

  it("close() tries the store about once per retryDelayMs, and says so once (was: a hot loop of failed writes, each saying 'retrying in 30000 ms')", async () => {
    let writes = 0;
    const logs: string[] = [];
    const store: LedgerStore = { write: (records) => ((writes += 1), down.write(records)), close: async () => {} };
    const ledger = new Ledger({ store, log: (line) => logs.push(line), retryDelayMs: 100, keepUnwritten: async () => "kept.jsonl" });
    ledger.record(makeCostRecord());
    await new Promise((resolve) => setTimeout(resolve, 20)); // the first write fails; its retry is set
    await ledger.close(1_000);
    // 1 s at one try per 100 ms is about 10; the loop made tens of thousands.
    expect(writes).toBeLessThan(30);
    const failed = logs.filter((line) => line.includes("cost records failed"));
    expect(failed).toEqual([expect.stringMatching(/retrying in 100 ms/), expect.stringMatching(/while stopping .*trying again every 100 ms until the stop's deadline/)]);
  });
});

describe("log ledger (the Workers store)", () => {
  it("writes each record as one JSON line, at once when the ledger is told to (as the Worker does), and every line reads back as its record", async () => {
    const lines: string[] = [];
    const ledger = new Ledger({ store: new LogLedgerStore((line) => lines.push(line)), log: () => {}, schedule: (flush) => flush() });
    const first = makeCostRecord({ requestId: "req_edge_1" });
    const second = makeCostRecord({ requestId: "req_edge_2", status: "aborted" });
    ledger.record(first);
    expect(lines).toHaveLength(1); // written within record(), not on a later turn
    ledger.record(second); // while the first write's promise settles: it follows in the same turn
    for (let i = 0; i < 10; i++) await Promise.resolve(); // promise jobs only, no timer, no I/O
    expect(lines.map((line) => JSON.parse(line))).toEqual([
      { type: COST_RECORD_LOG_TYPE, record: first },
      { type: COST_RECORD_LOG_TYPE, record: second },
    ]);
    expect(lines.every((line) => !line.includes("\n"))).toBe(true);
  });
});

describe("Ledger queue timing", () => {
  it("a record queued while the previous write is finishing is still written (every microtask gap)", async () => {
    for (let hops = 0; hops < 8; hops++) {
      const written: string[] = [];
      let ledger: Ledger | undefined = undefined;
      const store: LedgerStore = {
        async write(records) {
          written.push(...records.map((record) => record.requestId));
          if (written.length === 1) {
            let chain = Promise.resolve();
            for (let i = 0; i < hops; i++) chain = chain.then(() => undefined);
            void chain.then(() => ledger!.record(makeCostRecord({ requestId: "late" })));
          }
        },
        async close() {},
      };
      ledger = new Ledger({ store, log: () => {} });
      ledger.record(makeCostRecord({ requestId: "first" }));
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect({ hops, written }).toEqual({ hops, written: ["first", "late"] });
    }
  });
});
