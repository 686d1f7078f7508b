import { appendFile, mkdir, readFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { CostRecord } from "../metering/cost-record.ts";
import type { LedgerStore } from "./ledger-store.ts";

// The embedded store: one JSON record per line, appended, never rewritten, so records survive a
// restart and a crash loses at most the line being written. Ids already in the file are read at
// open, which makes a retried write idempotent here too. Node only.

export class FileLedgerStore implements LedgerStore {
  private constructor(
    readonly path: string,
    private readonly written: RecentIds,
    /** The file ends in the middle of a line (a crash mid-append): start the next write on a new one. */
    private needsNewline: boolean,
  ) {}

  /** Opens (or creates) the file; `visit` sees every record already in it, read this once. */
  static async open(path: string, visit?: (record: CostRecord) => void): Promise<FileLedgerStore> {
    await mkdir(dirname(path), { recursive: true });
    const text = await readFile(path, "utf8").catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return "";
      throw error;
    });
    const written = new RecentIds();
    for (const record of parseLedgerText(text)) {
      written.add(record.requestId);
      visit?.(record);
    }
    return new FileLedgerStore(path, written, text.length > 0 && !text.endsWith("\n"));
  }

  async write(records: readonly CostRecord[]): Promise<void> {
    const fresh = records.filter((record) => !this.written.has(record.requestId));
    if (fresh.length === 0) return;
    const lines = fresh.map((record) => JSON.stringify(record) + "\n").join("");
    try {
      await appendFile(this.path, (this.needsNewline ? "\n" : "") + lines);
    } catch (error) {
      // Part of the batch may be on disk as a torn line: the retry starts on a fresh one.
      this.needsNewline = true;
      throw error;
    }
    this.needsNewline = false;
    for (const record of fresh) this.written.add(record.requestId);
  }

  async close(): Promise<void> {}
}

/** Every whole record in a ledger file; a torn last line (a crash mid-append) is skipped. */
export function parseLedgerText(text: string): CostRecord[] {
  const records: CostRecord[] = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    try {
      records.push(JSON.parse(line) as CostRecord);
    } catch {
      // A partial line from an interrupted append; the record it held was retried or lost with the process.
    }
  }
  return records;
}

export async function readLedgerFile(path: string): Promise<CostRecord[]> {
  return parseLedgerText(await readFile(path, "utf8"));
}

/**
 * The request ids written most recently. A retried batch comes back within minutes, so only
 * the latest ids need checking; keeping every id ever written would grow without end in a
 * long-running gateway (a day at 100 requests/s is 8.6 million ids).
 */
class RecentIds {
  private readonly ids = new Set<string>();

  constructor(private readonly limit = 200_000) {}

  has(id: string): boolean {
    return this.ids.has(id);
  }

  add(id: string): void {
    this.ids.add(id);
    if (this.ids.size > this.limit) this.ids.delete(this.ids.values().next().value as string);
  }
}
