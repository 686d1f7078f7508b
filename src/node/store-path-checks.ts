import { randomUUID } from "node:crypto";
import { mkdir, open, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { ConfigError } from "../config/resolve-config.ts";

// A store.path the gateway cannot write stops start-up, as every other start-up error does, with
// the setting and the fix: Node's own error ("EISDIR: illegal operation on a directory, read")
// named neither. On Redis too: its directory holds what the gateway keeps during an outage.
// Checked by opening the file to append, as the ledger will, so a file that can be read but not
// written is found now, not at the first record.

/** Creates the embedded ledger's file (and its directory) if need be, or says why it cannot be. */
export async function checkStorePath(path: string): Promise<void> {
  try {
    await mkdir(dirname(path), { recursive: true });
    await (await open(path, "a")).close();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const fix = code === "EISDIR" ? `is a directory; name a file in it, such as ${join(path, "ledger.jsonl")}` : unwritable(code, dirname(path));
    if (!fix) throw error;
    throw new ConfigError([`store.path: ${path} ${fix}`]);
  }
}

/**
 * On Redis, store.path's directory is where a gateway keeps the cost records and budget
 * settlements it cannot write during an outage (unwritten-records.ts). One it cannot write (a
 * container's read-only root filesystem) showed only at a stop during an outage, as records lost:
 * checked at start-up, by writing a file there and removing it.
 */
export async function checkKeptDirectory(storePath: string, named: boolean): Promise<void> {
  const directory = dirname(storePath);
  const probe = join(directory, `.tollgate-write-check-${randomUUID()}`);
  try {
    await mkdir(directory, { recursive: true });
    await (await open(probe, "wx")).close();
    await rm(probe, { force: true });
  } catch (error) {
    const fix = unwritable((error as NodeJS.ErrnoException).code, directory);
    if (!fix) throw error;
    const setting = named ? "store.path" : "store.path (not set: the default)";
    throw new ConfigError([`${setting}: ${storePath} ${fix}. On Redis its directory is where a gateway keeps the cost records and budget settlements it cannot write during an outage`]);
  }
}

/** Why a path under `directory` cannot be written and what to do, for the errors Node gives; undefined for others. */
function unwritable(code: string | undefined, directory: string): string | undefined {
  if (code === "ENOTDIR" || code === "EEXIST") return "cannot be created: part of the path above it is a file, not a directory; name a file in a directory";
  if (code === "EACCES" || code === "EPERM") return `may not be written by this user; give it write access to ${directory}, or name another store.path`;
  if (code === "EROFS") return `is on a read-only file system; name a store.path on a writable volume`;
  return undefined;
}
