import { appendFile, mkdir, mkdtemp, readFile, rm, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { budgetedConfig } from "../../test/support/admission-rig.ts";
import { makeCostRecord } from "../../test/support/cost-records.ts";
import { SpendTally } from "../budgets/spend-tally.ts";
import type { CostRecord } from "../metering/cost-record.ts";
import { FileLedgerStore } from "./file-ledger-store.ts";
import { checkpointPath, type LedgerFollower } from "./ledger-checkpoint.ts";

// A clean stop leaves a checkpoint of what the ledger file's records add up to; the next start
// restores it and reads only the records appended after it. Every test compares the totals a
// start through the checkpoint gives with those of reading the whole file, exactly.

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "tollgate-checkpoint-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const DAYS = ["2026-11-21", "2026-11-22", "2026-11-23"];
const record = (id: number, overrides: Partial<CostRecord> = {}) =>
  makeCostRecord({ requestId: `req_${id}`, time: `${DAYS[id % 3]}T10:00:00.000Z`, keyId: `key${id % 2}`, ...overrides });

/** Counts the records it is shown, and can be checkpointed (its count is its state). */
class Counter implements LedgerFollower {
  seen = 0;
  total = 0;
  checkpoint = {
    fingerprint: "counter",
    snapshot: () => this.total,
    restore: (state: unknown) => void (this.total = state as number),
  };
  add(record: CostRecord) {
    this.seen += 1;
    this.total += record.cost.totalNano;
  }
}

async function allTotals(store: FileLedgerStore) {
  return Object.fromEntries(await Promise.all(DAYS.map(async (day) => [day, await store.totals(day)] as const)));
}

/** The totals of reading the whole file, checkpoint or not. */
async function wholeFileTotals(path: string) {
  const saved = await readFile(checkpointPath(path)).catch(() => undefined);
  await rm(checkpointPath(path), { force: true });
  try {
    return await allTotals(await FileLedgerStore.open(path));
  } finally {
    if (saved) await writeFile(checkpointPath(path), saved);
  }
}

describe("the embedded ledger's checkpoint", () => {
  it("after a clean stop, a start reads only the records appended since, and adds up to the whole file exactly", async () => {
    const path = join(dir, "clean.jsonl");
    const first = await FileLedgerStore.open(path, { follower: new Counter() });
    await first.write(Array.from({ length: 30 }, (_, id) => record(id)));
    await first.close();

    // Appended after the stop (another start that crashed before its own clean stop).
    const crashed = await FileLedgerStore.open(path);
    await crashed.write([record(30), record(31, { cost: { ...record(0).cost, totalNano: 7 } })]);

    const follower = new Counter();
    const logs: string[] = [];
    const reopened = await FileLedgerStore.open(path, { follower, log: (line) => logs.push(line) });
    expect(follower.seen).toBe(2); // read: only the two records after the checkpoint
    expect(follower.total).toBe(31 * 2_140_000 + 7); // the checkpoint's 30, then the two read
    expect(await allTotals(reopened)).toEqual(await wholeFileTotals(path));
    expect(logs).toEqual([]);
  });

  it("a record written again just after the checkpoint (a torn append's retry) counts once", async () => {
    const path = join(dir, "dup.jsonl");
    const store = await FileLedgerStore.open(path, { follower: new Counter() });
    await store.write([record(1), record(2)]);
    await store.close();
    await appendFile(path, JSON.stringify(record(2)) + "\n" + JSON.stringify(record(3)) + "\n");
    const follower = new Counter();
    const reopened = await FileLedgerStore.open(path, { follower });
    expect(follower.seen).toBe(1);
    expect(await allTotals(reopened)).toEqual(await wholeFileTotals(path));
    // And a retried write of an id from before the checkpoint is still a no-op.
    await reopened.write([record(1)]);
    expect((await readFile(path, "utf8")).match(/"req_1"/g)).toHaveLength(1);
  });

  it("keeps a sum past 2^53 exact", async () => {
    const path = join(dir, "big.jsonl");
    const huge = (id: number) => record(id * 6, { cost: { ...record(0).cost, totalNano: Number.MAX_SAFE_INTEGER - 1 } });
    const store = await FileLedgerStore.open(path);
    await store.write([huge(1), huge(2)]);
    await store.close();
    const reopened = await FileLedgerStore.open(path);
    const cost = (await reopened.totals(DAYS[0]!)).find((entry) => entry.metric === "cost_nano");
    expect(cost?.value).toBe(2n * BigInt(Number.MAX_SAFE_INTEGER - 1));
  });

  it.each([
    ["replaced by another file", (path: string) => writeFile(path, JSON.stringify(record(90)) + "\n" + JSON.stringify(record(91)) + "\n" + JSON.stringify(record(92)) + "\n" + JSON.stringify(record(93)) + "\n"), "the file was replaced"],
    ["truncated", (path: string) => truncate(path, 10), "shorter"],
    ["torn", (path: string) => writeFile(checkpointPath(path), "{\"version\":1,"), "not JSON"],
  ])("is not used when the file was %s: the whole file is read, and the log says why", async (_what, change, why) => {
    const path = join(dir, `changed-${why.replace(/\W/g, "")}.jsonl`);
    const store = await FileLedgerStore.open(path);
    await store.write([record(1), record(2), record(3), record(4)]);
    await store.close();
    await change(path);
    const logs: string[] = [];
    const follower = new Counter();
    const reopened = await FileLedgerStore.open(path, { follower, log: (line) => logs.push(line) });
    expect(logs.join("\n")).toContain(why);
    expect(logs.join("\n")).toContain("reading the whole file");
    expect(await allTotals(reopened)).toEqual(await wholeFileTotals(path));
  });

  it("a checkpoint that cannot be written is logged, and close still resolves", async () => {
    const path = join(dir, "unwritable.jsonl");
    await mkdir(checkpointPath(path), { recursive: true }); // a directory where the file would go
    const logs: string[] = [];
    const store = await FileLedgerStore.open(path, { log: (line) => logs.push(line) });
    await store.write([record(1)]);
    await store.close();
    expect(logs.join("\n")).toMatch(/no checkpoint written \(.*\); the next start reads the records after the last one/);
  });

  it("a follower that cannot be checkpointed sees every record, and leaves no checkpoint", async () => {
    const path = join(dir, "plain.jsonl");
    const store = await FileLedgerStore.open(path);
    await store.write([record(1), record(2)]);
    await store.close(); // leaves one
    const seen: string[] = [];
    const plain = await FileLedgerStore.open(path, { follower: { add: (each) => seen.push(each.requestId) } });
    expect(seen).toEqual(["req_1", "req_2"]);
    await rm(checkpointPath(path));
    await plain.close();
    await expect(readFile(checkpointPath(path))).rejects.toThrow("ENOENT");
  });
});

describe("the budgets' spend through a checkpoint", () => {
  const daily = (timeZone = "UTC") =>
    budgetedConfig({
      chat: { targets: [{ provider: "openai", model: "gpt-4o" }], budget: { usd: 5, window: "day", timeZone } },
      forever: { targets: [{ provider: "openai", model: "gpt-4o" }], budget: { usd: 5, window: "total" } },
    });
  const spent = (route: string, time: string, totalNano: number) => makeCostRecord({ requestId: `req_${route}_${time}`, route, time, cost: { ...makeCostRecord().cost, totalNano } });

  it("restores the windows still running, drops those that ended, and matches a whole-file read exactly", async () => {
    const path = join(dir, "spend.jsonl");
    const store = await FileLedgerStore.open(path, { follower: new SpendTally(daily(), Date.parse("2026-11-22T08:00:00Z")) });
    await store.write([spent("chat", "2026-11-22T09:00:00.000Z", 1_000), spent("chat", "2026-11-22T23:00:00.000Z", 20), spent("forever", "2026-11-22T09:00:00.000Z", 300)]);
    await store.close();
    await appendFile(path, JSON.stringify(spent("chat", "2026-11-23T01:00:00.000Z", 4_000)) + "\n");

    // The next day: 2026-11-22's window has ended, 2026-11-23's and the total run on.
    const now = Date.parse("2026-11-23T12:00:00Z");
    const tally = new SpendTally(daily(), now);
    await FileLedgerStore.open(path, { follower: tally });
    expect(Object.fromEntries(tally.totals)).toEqual({ "route:chat|2026-11-23": 4_000, "route:forever|total": 300 });
    const whole = new SpendTally(daily(), now);
    await rm(checkpointPath(path));
    await FileLedgerStore.open(path, { follower: whole });
    expect(tally.totals).toEqual(whole.totals);
  });

  it("a budget whose time zone changed is added up again from the whole file", async () => {
    const path = join(dir, "zone.jsonl");
    const now = Date.parse("2026-11-23T02:00:00Z");
    const store = await FileLedgerStore.open(path, { follower: new SpendTally(daily(), now) });
    // 2026-11-23T01:00Z is still the 22nd in New York: under UTC the two were on different days.
    await store.write([spent("chat", "2026-11-22T20:00:00.000Z", 1_000), spent("chat", "2026-11-23T01:00:00.000Z", 20)]);
    await store.close();

    const logs: string[] = [];
    const tally = new SpendTally(daily("America/New_York"), now);
    await FileLedgerStore.open(path, { follower: tally, log: (line) => logs.push(line) });
    expect(logs.join("\n")).toContain("the budgets' windows or time zones changed since");
    expect(Object.fromEntries(tally.totals)).toEqual({ "route:chat|2026-11-22": 1_020 });
  });

  it("a changed limit alone keeps the checkpoint (a limit changes no spend)", async () => {
    const path = join(dir, "limit.jsonl");
    const now = Date.parse("2026-11-23T02:00:00Z");
    const store = await FileLedgerStore.open(path, { follower: new SpendTally(daily(), now) });
    await store.write([spent("chat", "2026-11-23T01:00:00.000Z", 20)]);
    await store.close();
    const raised = budgetedConfig({
      chat: { targets: [{ provider: "openai", model: "gpt-4o" }], budget: { usd: 500, window: "day" } },
      forever: { targets: [{ provider: "openai", model: "gpt-4o" }], budget: { usd: 9, window: "total" } },
    });
    const logs: string[] = [];
    const tally = new SpendTally(raised, now);
    await FileLedgerStore.open(path, { follower: tally, log: (line) => logs.push(line) });
    expect(logs).toEqual([]);
    expect(Object.fromEntries(tally.totals)).toEqual({ "route:chat|2026-11-23": 20 });
  });
});
