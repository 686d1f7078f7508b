import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeCostRecord } from "../../test/support/cost-records.ts";
import type { CostRecord } from "../metering/cost-record.ts";
import type { SettlePlan } from "../budgets/admission-store.ts";
import { UnwritableRecords } from "../ledger/ledger-store.ts";
import { keepUnsettled, keepUnwritten, replayUnwritten } from "./unwritten-records.ts";

// The records a gateway stopped during a Redis outage could not write, kept on disk and written
// (and charged) by the next start.

/** Kept files of one store in `dir`. */
const keptIn = (directory: string, storeTag = "0123456789ab") => ({ directory, storeTag });

/** A ledger and a budget store that remember what reached them. */
function fakeStores() {
  const written: CostRecord[] = [];
  const settled: SettlePlan[] = [];
  const ledger = { write: async (records: readonly CostRecord[]) => void written.push(...records), close: async () => {} };
  return { written, settled, stores: { ledger, settle: async (plan: SettlePlan) => void settled.push(plan) } };
}

describe("kept cost records", () => {
  // Every config run from one working directory keeps its files in .tollgate/, also those of
  // deployments apart only by store.keyPrefix. Was: any gateway replayed every file there, so one
  // deployment wrote another's records to its own ledger and charged its settlements to its own budgets.
  it("are written and settled only by a gateway of the store that kept them", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tollgate-kept-"));
    const record = makeCostRecord();
    const plan: SettlePlan = { requestId: record.requestId, now: 1, scopeKeys: ["route:a|total"], actualNano: 12_500_000, tokens: 2000, rateScopes: [] };
    await keepUnwritten(keptIn(dir, "aaaaaaaaaaaa"))([record]);
    await keepUnsettled(keptIn(dir, "aaaaaaaaaaaa"))([plan]);
    const other = fakeStores();
    await replayUnwritten(keptIn(dir, "bbbbbbbbbbbb"), other.stores, () => {});
    expect({ written: other.written, settled: other.settled, kept: readdirSync(dir).length }).toEqual({ written: [], settled: [], kept: 2 });
    const own = fakeStores();
    await replayUnwritten(keptIn(dir, "aaaaaaaaaaaa"), own.stores, () => {});
    expect({ written: own.written.map((each) => each.requestId), settled: own.settled, kept: readdirSync(dir) }).toEqual({ written: [record.requestId], settled: [plan], kept: [] });
  });

  it("kept before files named their store are written by the first gateway to start, whose they are being unknown", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tollgate-kept-"));
    const record = makeCostRecord();
    writeFileSync(join(dir, "unwritten-11111111-2222-3333-4444-555555555555.jsonl"), JSON.stringify(record) + "\n");
    const { written, stores } = fakeStores();
    await replayUnwritten(keptIn(dir), stores, () => {});
    expect(written.map((each) => each.requestId)).toEqual([record.requestId]);
  });

  it("are written by the next start, and their file is removed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tollgate-kept-"));
    const records = Array.from({ length: 3 }, () => makeCostRecord());
    await keepUnwritten(keptIn(dir))(records);
    const { written, stores } = fakeStores();
    await replayUnwritten(keptIn(dir), stores, () => {});
    expect(written.map((record) => record.requestId)).toEqual(records.map((record) => record.requestId));
    expect(readdirSync(dir)).toEqual([]);
  });

  // A file is written under another name and renamed whole: one still being written is not read.
  it("leave a file still being written alone", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tollgate-kept-"));
    writeFileSync(join(dir, "unwritten-11111111-2222-3333-4444-555555555555.jsonl.partial"), JSON.stringify(makeCostRecord()).slice(0, 30));
    const { written, stores } = fakeStores();
    await replayUnwritten(keptIn(dir), stores, () => {});
    expect(written).toEqual([]);
    expect(readdirSync(dir)).toHaveLength(1);
  });

  // Used to be wrong: one torn line (a disk that filled up) failed the whole file, at every start.
  it("with a torn last line, still write the complete ones, and set the torn one aside", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tollgate-kept-"));
    const records = Array.from({ length: 3 }, () => makeCostRecord());
    const text = records.map((record) => JSON.stringify(record)).join("\n") + "\n";
    const name = "unwritten-aaaaaaaa-2222-3333-4444-555555555555.jsonl";
    writeFileSync(join(dir, name), text.slice(0, text.length - 40));
    const { written, stores } = fakeStores();
    const logs: string[] = [];
    await replayUnwritten(keptIn(dir), stores, (line) => logs.push(line));
    expect(written.map((record) => record.requestId)).toEqual(records.slice(0, 2).map((record) => record.requestId));
    expect(readdirSync(dir)).toEqual([`${name}.unreadable`]);
    expect(readFileSync(join(dir, `${name}.unreadable`), "utf8")).toContain(records[2]!.requestId.slice(0, 4));
    expect(logs.some((line) => line.includes("set aside"))).toBe(true);
  });

  it("with a record no store can add up, write the others, log that one whole, and remove the file (not retry it at every start)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tollgate-kept-"));
    const fine = makeCostRecord({ requestId: "req_fine" });
    const absurd = makeCostRecord({ requestId: "req_absurd", cost: { inputNano: 4.6e22, cacheReadNano: 0, cacheWriteNano: 0, outputNano: 0, totalNano: 4.6e22, cacheSavingsNano: 0 } });
    await keepUnwritten(keptIn(dir))([fine, absurd]);
    const written: CostRecord[] = [];
    const ledger = {
      write: async (records: readonly CostRecord[]) => {
        written.push(...records.filter((record) => record.requestId !== "req_absurd"));
        const refused = records.filter((record) => record.requestId === "req_absurd");
        if (refused.length > 0) throw new UnwritableRecords(refused.map((record) => ({ record, reason: "its cost_nano of 4.6e+22 is not an exact integer" })));
      },
      close: async () => {},
    };
    const logs: string[] = [];
    await replayUnwritten(keptIn(dir), { ledger, settle: async () => {} }, (line) => logs.push(line));
    expect(written.map((record) => record.requestId)).toEqual(["req_fine"]);
    expect(readdirSync(dir)).toEqual([]);
    expect(logs.some((line) => line.startsWith("[tollgate] error: cost record req_absurd cannot be written") && line.includes(JSON.stringify(absurd)))).toBe(true);
  });

  it("kept settlements are made by the next start, and their file is removed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tollgate-kept-"));
    const plan: SettlePlan = { requestId: "req_kept", now: 1, scopeKeys: ["route:a|total"], actualNano: 12_500_000, tokens: 2000, rateScopes: [] };
    await keepUnsettled(keptIn(dir))([plan]);
    const { settled, stores } = fakeStores();
    await replayUnwritten(keptIn(dir), stores, () => {});
    expect(settled).toEqual([plan]);
    expect(readdirSync(dir)).toEqual([]);
  });
});
