import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeCostRecord } from "../../test/support/cost-records.ts";
import type { CostRecord } from "../metering/cost-record.ts";
import type { SettlePlan } from "../budgets/admission-store.ts";
import { keepUnsettled, keepUnwritten, replayUnwritten } from "./unwritten-records.ts";

// The records a gateway stopped during a Redis outage could not write, kept on disk and written
// (and charged) by the next start.

function fakeStore() {
  const written: CostRecord[] = [];
  return { written, store: { write: async (records: readonly CostRecord[]) => void written.push(...records), close: async () => {} } };
}

describe("kept cost records", () => {
  it("are written and charged once by the next start, and their file is removed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tollgate-kept-"));
    const records = Array.from({ length: 3 }, () => makeCostRecord());
    await keepUnwritten(dir)(records);
    const { written, store } = fakeStore();
    const charged: string[] = [];
    await replayUnwritten(dir, store, async (record) => void charged.push(record.requestId), () => {});
    expect(written.map((record) => record.requestId)).toEqual(records.map((record) => record.requestId));
    expect(charged).toEqual(records.map((record) => record.requestId));
    expect(readdirSync(dir)).toEqual([]);
  });

  // A file is written under another name and renamed whole: one still being written is not read.
  it("leave a file still being written alone", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tollgate-kept-"));
    writeFileSync(join(dir, "unwritten-11111111-2222-3333-4444-555555555555.jsonl.partial"), JSON.stringify(makeCostRecord()).slice(0, 30));
    const { written, store } = fakeStore();
    await replayUnwritten(dir, store, async () => {}, () => {});
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
    const { written, store } = fakeStore();
    const logs: string[] = [];
    await replayUnwritten(dir, store, async () => {}, (line) => logs.push(line));
    expect(written.map((record) => record.requestId)).toEqual(records.slice(0, 2).map((record) => record.requestId));
    expect(readdirSync(dir)).toEqual([`${name}.unreadable`]);
    expect(readFileSync(join(dir, `${name}.unreadable`), "utf8")).toContain(records[2]!.requestId.slice(0, 4));
    expect(logs.some((line) => line.includes("set aside"))).toBe(true);
  });

  it("kept settlements are applied before the records are charged, and their file is removed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tollgate-kept-"));
    const plan: SettlePlan = { requestId: "req_kept", now: 1, scopeKeys: ["route:a|total"], actualNano: 12_500_000, tokens: 2000, rateScopes: [] };
    await keepUnsettled(dir)([plan]);
    await keepUnwritten(dir)([makeCostRecord({ requestId: "req_kept" })]);
    const { store } = fakeStore();
    const order: string[] = [];
    await replayUnwritten(dir, store, async (record) => void order.push(`charge ${record.requestId}`), () => {}, async (kept) => void order.push(`settle ${kept.requestId} ${kept.actualNano}`));
    expect(order).toEqual(["settle req_kept 12500000", "charge req_kept"]);
    expect(readdirSync(dir)).toEqual([]);
  });
});
