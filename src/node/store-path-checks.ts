import { mkdir, open } from "node:fs/promises";
import { dirname, join } from "node:path";
import { ConfigError } from "../config/resolve-config.ts";

// A store.path the gateway cannot write stops start-up, as every other start-up error does, with
// the setting and the fix: Node's own error ("EISDIR: illegal operation on a directory, read")
// named neither. Checked by opening the file to append, as the ledger will, so a file that can be
// read but not written is found now, not at the first record.

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

/** Why a path under `directory` cannot be written and what to do, for the errors Node gives; undefined for others. */
function unwritable(code: string | undefined, directory: string): string | undefined {
  if (code === "ENOTDIR" || code === "EEXIST") return "cannot be created: part of the path above it is a file, not a directory; name a file in a directory";
  if (code === "EACCES" || code === "EPERM") return `may not be written by this user; give it write access to ${directory}, or name another store.path`;
  if (code === "EROFS") return `is on a read-only file system; name a store.path on a writable volume`;
  return undefined;
}
