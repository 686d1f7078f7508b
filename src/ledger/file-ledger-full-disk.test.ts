import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { makeCostRecord } from "../../test/support/cost-records.ts";
import type { CostRecord } from "../metering/cost-record.ts";
import { FileLedgerStore, readLedgerFile } from "./file-ledger-store.ts";
import { checkpointPath } from "./ledger-checkpoint.ts";
import { Ledger } from "./ledger.ts";

// A full disk under the embedded store, for as long as the test says: appends fail with ENOSPC
// and write nothing; a checkpoint's write lands its first bytes, then fails the same way.
const disk = vi.hoisted(() => ({ full: false }));
vi.mock("node:fs/promises", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs/promises")>();
  const enospc = () => Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
  const appendFile = async (...args: Parameters<typeof real.appendFile>) => {
    if (disk.full) throw enospc();
    return real.appendFile(...args);
  };
  const writeFile = async (...args: Parameters<typeof real.writeFile>) => {
    if (!disk.full) return real.writeFile(...args);
    await real.writeFile(args[0], String(args[1]).slice(0, 100));
    throw enospc();
  };
  return { ...real, default: { ...real, appendFile, writeFile }, appendFile, writeFile };
});

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "tollgate-full-disk-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterEach(() => {
  disk.full = false;
});

const SET_ASIDE = "set aside: ";
const setAside = (logs: string[]) => logs.filter((line) => line.includes(SET_ASIDE)).map((line) => JSON.parse(line.slice(line.indexOf(SET_ASIDE) + SET_ASIDE.length)) as CostRecord);

describe("the embedded ledger on a full disk", () => {
  // Was: every record queued in memory for as long as the disk stayed full (hours of traffic),
  // until the process ran out of memory and lost all of them. The Redis path keeps those past
  // the bound in a file; on a full disk the file store has nowhere but the log.
  it("holds at most maxQueued records in memory, logs each one past it whole, and loses none", async () => {
    const path = join(dir, "bounded.jsonl");
    const logs: string[] = [];
    const ledger = new Ledger({ store: await FileLedgerStore.open(path), log: (line) => logs.push(line), retryDelayMs: 60_000, maxQueued: 600 });
    const records = Array.from({ length: 2_000 }, (_, index) => makeCostRecord({ requestId: `req_full_${index}` }));
    disk.full = true;
    ledger.record(records[0]!);
    await vi.waitFor(() => expect(ledger.failing).toBe(true));
    for (const record of records.slice(1)) ledger.record(record);

    expect(ledger.pending).toBe(600);
    // The newest, each whole on its own line, saying why.
    expect(setAside(logs)).toEqual(records.slice(600));
    expect(logs.find((line) => line.includes(SET_ASIDE))).toMatch(/^\[tollgate\] error: cost record req_full_600 could not be written \(the store is failing: ENOSPC: no space left on device, write\) and 600 records already wait in memory; set aside: /);

    // The disk has room again: the records held in memory land, each once.
    disk.full = false;
    expect(await ledger.close(5_000)).toEqual({ lost: 0 });
    expect((await readLedgerFile(path)).map((record) => record.requestId)).toEqual(records.slice(0, 600).map((record) => record.requestId));
  });

  // Set aside, a record is in the log and not in the file: only a store that fails may cost
  // that. Was: also when the store was merely slow (a write in flight while 600 queued).
  it("a store that is slow but writing sets nothing aside: the queue waits for it", async () => {
    const path = join(dir, "slow.jsonl");
    const logs: string[] = [];
    const store = await FileLedgerStore.open(path);
    let release!: () => void;
    const slow = new Promise<void>((resolve) => (release = resolve));
    const ledger = new Ledger({
      store: { write: async (records) => (await slow, store.write(records)), close: () => store.close() },
      log: (line) => logs.push(line),
      maxQueued: 600,
    });
    const records = Array.from({ length: 2_000 }, (_, index) => makeCostRecord({ requestId: `req_slow_${index}` }));
    for (const record of records) ledger.record(record);
    expect(setAside(logs)).toEqual([]);
    expect(ledger.pending).toBe(2_000);
    release();
    expect(await ledger.close(5_000)).toEqual({ lost: 0 });
    expect((await readLedgerFile(path)).map((record) => record.requestId)).toEqual(records.map((record) => record.requestId));
  });

  it("a checkpoint that fails part-way leaves no temporary file behind, and the last checkpoint stands", async () => {
    const path = join(dir, "checkpoint.jsonl");
    const logs: string[] = [];
    const first = await FileLedgerStore.open(path);
    await first.write([makeCostRecord({ requestId: "req_before" })]);
    await first.close(); // a good checkpoint, of one record
    const store = await FileLedgerStore.open(path, { log: (line) => logs.push(line) });
    await store.write([makeCostRecord({ requestId: "req_after" })]);
    disk.full = true;
    await store.close();
    disk.full = false;

    expect(logs.join("\n")).toMatch(/no checkpoint written \(ENOSPC: no space left on device, write\)/);
    expect((await readdir(dir)).filter((name) => name.startsWith("checkpoint.jsonl"))).toEqual(["checkpoint.jsonl", "checkpoint.jsonl.checkpoint"]);
    // The start after it reads the record the old checkpoint does not cover.
    const reopened = await FileLedgerStore.open(path);
    expect((await reopened.totals("2026-11-22")).find((entry) => entry.metric === "requests")?.value).toBe(2);
  });

  it("a checkpoint that cannot be renamed into place leaves no temporary file either", async () => {
    const path = join(dir, "rename.jsonl");
    await mkdir(checkpointPath(path)); // a directory where the checkpoint would go
    const store = await FileLedgerStore.open(path, { log: () => {} });
    await store.write([makeCostRecord({ requestId: "req_rename" })]);
    await store.close();
    expect((await readdir(dir)).filter((name) => name.startsWith("rename.jsonl"))).toEqual(["rename.jsonl", "rename.jsonl.checkpoint"]);
  });
});
