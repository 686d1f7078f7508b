import { mkdtemp, open, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { FileLedgerStore, readLedgerFile } from "../../src/ledger/file-ledger-store.ts";
import { Ledger } from "../../src/ledger/ledger.ts";
import { makeCostRecord } from "../../test/support/cost-records.ts";

// The disk fills up once, in the middle of an append: part of the data lands, then ENOSPC.
// (Both ways the store may append: fs/promises appendFile on the path, or a FileHandle's.)
const tear = vi.hoisted(() => ({ armed: false, keep: 0 }));
vi.mock("node:fs/promises", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs/promises")>();
  const appendFile = async (path: Parameters<typeof real.appendFile>[0], data: string, ...rest: unknown[]) => {
    if (tear.armed) {
      tear.armed = false;
      await real.appendFile(path, data.slice(0, tear.keep));
      throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    }
    return (real.appendFile as (...args: unknown[]) => Promise<void>)(path, data, ...rest);
  };
  return { ...real, default: { ...real, appendFile }, appendFile };
});

// FileLedgerStore.write: when an append fails part-way (ENOSPC, EIO), the lines that did land stay
// in the file and the retry appends the whole batch again on a fresh line. Those records are
// then in the file twice. open() adds the ids to its RecentIds set (deduplicated) but calls
// `visit` for every line, and visit is what rebuilds the budgets' spend (SpendTally, in
// src/node/open-stores.ts): after a restart that spend is counted twice. readLedgerFile (the
// records a report reads) returns the duplicates too.

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "review-ledger-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterEach(() => vi.restoreAllMocks());

describe("the file ledger after a torn append and its retry", () => {
  it("replays each request id once (spend rebuilt at start-up is not doubled)", async () => {
    const path = join(dir, "ledger.jsonl");
    const a = makeCostRecord({ requestId: "req_a" }); // 2,140,000 nano
    const b = makeCostRecord({ requestId: "req_b" }); // 2,140,000 nano

    // A disk that fills up in the middle of the batch: record a and part of b land, then ENOSPC.
    tear.armed = true;
    tear.keep = JSON.stringify(a).length + 1 + 40;
    const probe = await open(join(dir, "probe"), "w");
    const proto = Object.getPrototypeOf(probe) as { appendFile: (data: string) => Promise<void> };
    await probe.close();
    const realAppend = proto.appendFile;
    vi.spyOn(proto, "appendFile").mockImplementation(async function (this: unknown, data: string) {
      if (tear.armed) {
        tear.armed = false;
        await realAppend.call(this, data.slice(0, tear.keep));
        throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
      }
      return realAppend.call(this, data);
    });

    const store = await FileLedgerStore.open(path);
    const ledger = new Ledger({ store, log: () => {}, retryDelayMs: 5 });
    ledger.record(a);
    ledger.record(b);
    await ledger.close(2000);
    vi.restoreAllMocks();

    // After the restart: what the budgets' spend is rebuilt from.
    let spend = 0;
    const visited: string[] = [];
    await FileLedgerStore.open(path, {
      follower: {
        add: (record) => {
          visited.push(record.requestId);
          spend += record.cost.totalNano;
        },
      },
    });
    expect(visited).toEqual(["req_a", "req_b"]);
    expect(spend).toBe(4_280_000); // 2 × 2,140,000 nano
    expect((await readLedgerFile(path)).map((record) => record.requestId)).toEqual(["req_a", "req_b"]);
  });

  it("even without the retry story: a file holding one id twice is replayed once", async () => {
    const path = join(dir, "dup.jsonl");
    const a = makeCostRecord({ requestId: "req_dup" });
    await writeFile(path, JSON.stringify(a) + "\n" + JSON.stringify(a) + "\n");
    let spend = 0;
    await FileLedgerStore.open(path, { follower: { add: (record) => (spend += record.cost.totalNano) } });
    expect(spend).toBe(2_140_000);
    expect((await readFile(path, "utf8")).length).toBeGreaterThan(0);
  });
});
