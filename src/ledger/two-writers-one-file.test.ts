import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CostRecord } from "../metering/cost-record.ts";
import { makeCostRecord } from "../../test/support/cost-records.ts";
import { FileLedgerStore, readLedgerFile } from "./file-ledger-store.ts";
import { checkpointPath } from "./ledger-checkpoint.ts";

// Two gateways on one embedded ledger file: `npm start` twice in one directory, or a new process
// started while the old one drains. A gateway now locks its store.path (src/node/store-lock.ts),
// so a second one waits; these stores are opened without it, as by a tollgate before the lock.
// Each process's clean stop wrote a checkpoint of the bytes it had counted, which left out the
// other's lines: the next start resumed mid-line and never counted the other's records again
// (found by review: $0.004321 in the file, $0.004020 in the reports). A process that sees bytes
// it did not write now leaves no checkpoint.

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "tollgate-two-writers-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const costing = (requestId: string, totalNano: number): CostRecord =>
  makeCostRecord({ requestId, time: "2026-11-22T10:00:00.000Z", cost: { inputNano: 0, cacheReadNano: 0, cacheWriteNano: 0, outputNano: totalNano, totalNano, cacheSavingsNano: 0 } });

async function reportedNano(path: string): Promise<number> {
  const store = await FileLedgerStore.open(path);
  return (await store.totals("2026-11-22")).filter((entry) => entry.metric === "cost_nano").reduce((sum, entry) => sum + Number(entry.value), 0);
}

async function inFileNano(path: string): Promise<number> {
  return (await readLedgerFile(path)).reduce((sum, record) => sum + record.cost.totalNano, 0);
}

describe("two stores appending to one ledger file", () => {
  it("writing in turn: after both stop, a start reports every record in the file, and each stop said why it left no checkpoint", async () => {
    const path = join(dir, "in-turn.jsonl");
    const logs: string[] = [];
    const first = await FileLedgerStore.open(path, { log: (line) => logs.push(line) });
    const second = await FileLedgerStore.open(path, { log: (line) => logs.push(line) });
    await first.write([costing("first-1", 1_000)]);
    await second.write([costing("second-1", 20_000)]);
    await first.write([costing("first-2", 300_000)]);
    await second.write([costing("second-2", 4_000_000)]);
    await first.close();
    await second.close();

    expect(await inFileNano(path)).toBe(4_321_000);
    expect(await reportedNano(path)).toBe(4_321_000);
    expect(logs).toHaveLength(2);
    expect(logs[0]).toMatch(/^\[tollgate\] ledger: no checkpoint written: .*in-turn\.jsonl has \d+ bytes this process did not write since it opened it\. Another process writes to it: give each gateway its own store\.path, or use Redis/);
  });

  it("a rolling restart (the old process's last record lands after the new one opened) keeps both processes' records", async () => {
    const path = join(dir, "rolling.jsonl");
    const old = await FileLedgerStore.open(path);
    await old.write([costing("old-1", 1_000)]);
    const fresh = await FileLedgerStore.open(path);
    await old.write([costing("old-drained", 300_000)]);
    await old.close(); // it alone wrote since it opened: its checkpoint is good
    await fresh.write([costing("fresh-1", 20_000)]);
    await fresh.close(); // it did not write old-drained: no checkpoint

    expect(await inFileNano(path)).toBe(321_000);
    expect(await reportedNano(path)).toBe(321_000);
  });

  it("one store alone still leaves a checkpoint that the next start uses", async () => {
    const path = join(dir, "alone.jsonl");
    const logs: string[] = [];
    const store = await FileLedgerStore.open(path);
    await store.write([costing("alone-1", 5_000)]);
    await store.close();
    expect(existsSync(checkpointPath(path))).toBe(true);
    const reopened = await FileLedgerStore.open(path, { log: (line) => logs.push(line) });
    expect((await reopened.totals("2026-11-22")).find((entry) => entry.metric === "cost_nano")?.value).toBe(5_000);
    expect(logs).toEqual([]);
  });
});
