import { createHash } from "node:crypto";
import { readFile, rename, rm, writeFile, type FileHandle } from "node:fs/promises";
import type { CostRecord } from "../metering/cost-record.ts";

// The embedded ledger's start-up reads every record in its file once, to rebuild the daily
// totals that cost reports read and the spend that budgets hold (about 1 s per 100 MB here: a
// year at 1 request/s is some 20 GB, minutes before the gateway could answer). A clean stop
// therefore leaves a checkpoint beside the file: what those records added up to, and how many
// bytes of the file it covers. The next start restores it and reads only the records appended
// after it. A crash leaves the last checkpoint in place, still valid for the bytes it covers.
//
// The file is only ever appended to, so a checkpoint stays true of its first `size` bytes. It
// is not used, and the whole file is read as before, when the file is no longer the one it was
// taken of (shorter, or other bytes where its covered part ends: a file replaced or truncated by
// hand) or when what it holds was added up under other rules (a budget's window or time zone
// changed since).

export const CHECKPOINT_VERSION = 1;

/** Bytes at the end of the covered part whose hash identifies the file. */
const TAIL_BYTES = 4096;

/**
 * Something rebuilt from every record of the ledger (the budgets' spend). One that can be
 * checkpointed says under which rules it added the records up (`fingerprint`): a checkpoint
 * taken under other rules is not restored, and the whole file is read again.
 */
export interface LedgerFollower {
  add(record: CostRecord): void;
  checkpoint?: { fingerprint: string; snapshot(): unknown; restore(state: unknown): void };
}

export type LedgerCheckpoint = {
  version: typeof CHECKPOINT_VERSION;
  /** Bytes of the ledger file the checkpoint covers: it was taken after the last of them. */
  size: number;
  /** sha256 (hex) of the covered part's last TAIL_BYTES bytes. */
  tail: string;
  /** Records covered (for the start-up log line). */
  records: number;
  /** DailyTotals' state. */
  days: unknown;
  /** The newest request ids written, so a record written twice just before the checkpoint and just after it counts once. */
  recentIds: string[];
  follower?: { fingerprint: string; state: unknown };
};

export function checkpointPath(ledgerPath: string): string {
  return `${ledgerPath}.checkpoint`;
}

/** The hash of the bytes just before `size`, from an open ledger file. */
export async function tailHash(file: FileHandle, size: number): Promise<string> {
  const length = Math.min(TAIL_BYTES, size);
  const bytes = Buffer.alloc(length);
  let read = 0;
  while (read < length) {
    const { bytesRead } = await file.read(bytes, read, length - read, size - length + read);
    if (bytesRead === 0) break;
    read += bytesRead;
  }
  return createHash("sha256").update(bytes.subarray(0, read)).digest("hex");
}

/**
 * The checkpoint of a ledger file, if there is one that holds for it; otherwise why not (a
 * missing checkpoint is not worth a word: `undefined`).
 */
export async function readCheckpoint(ledgerPath: string, file: FileHandle, fileSize: number, fingerprint: string | undefined): Promise<LedgerCheckpoint | { unusable: string } | undefined> {
  let text: string;
  try {
    text = await readFile(checkpointPath(ledgerPath), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    return { unusable: `it could not be read (${(error as Error).message})` };
  }
  let checkpoint: LedgerCheckpoint;
  try {
    checkpoint = JSON.parse(text) as LedgerCheckpoint;
  } catch {
    return { unusable: "it is not JSON" };
  }
  if (checkpoint?.version !== CHECKPOINT_VERSION || !Number.isSafeInteger(checkpoint.size) || !Array.isArray(checkpoint.recentIds)) return { unusable: "it is of another version" };
  if (checkpoint.size > fileSize) return { unusable: `the file is shorter (${fileSize} bytes) than the ${checkpoint.size} it covers: replaced or truncated` };
  if ((await tailHash(file, checkpoint.size)) !== checkpoint.tail) return { unusable: "the file's bytes where it ends are not the ones it covered: the file was replaced" };
  if (fingerprint !== undefined && checkpoint.follower?.fingerprint !== fingerprint) return { unusable: "the budgets' windows or time zones changed since" };
  return checkpoint;
}

/**
 * Writes the checkpoint whole or not at all: a crash mid-write leaves the previous one. A write
 * that fails takes its temporary file with it. Was: a full disk left the part written (up to the
 * checkpoint's size, a megabyte or more) on that disk, under a name of its own per process id.
 */
export async function writeCheckpoint(ledgerPath: string, checkpoint: LedgerCheckpoint): Promise<void> {
  const path = checkpointPath(ledgerPath);
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    await writeFile(temporary, JSON.stringify(checkpoint));
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => undefined); // the write's failure is the one to report
    throw error;
  }
}
