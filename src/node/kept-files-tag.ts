import { createHash } from "node:crypto";
import { clusterSeeds, singleServerUrl } from "../store/redis-connection.ts";

// Records and settlements a gateway could not write to Redis are kept in files (unwritten-records.ts),
// in a directory that other deployments may share: every config run from one working directory
// keeps them in .tollgate/, and two deployments apart only by store.keyPrefix share one Redis too.
// A file names the store it belongs to, so a gateway replays only its own store's: another's
// records would go to the wrong cost reports, and its settlements to the wrong budgets.

/**
 * The tag of a store in its kept files' names: a hash (12 hex digits) of where its keys live, the
 * Redis servers (host, port, database; a Cluster's seeds in any order) and the key prefix. No
 * password or user: a rotated password is the same store. The hash, not the names themselves, as
 * a host or prefix may hold characters a file name cannot.
 */
export function keptFilesTag(redisUrl: string, cluster: boolean, keyPrefix: string): string {
  const where = cluster ? clusterSeeds(redisUrl).nodes.map(({ host, port }) => `${host}:${port}`).sort().join(",") : serverAddress(redisUrl);
  return createHash("sha256").update(JSON.stringify([cluster ? "cluster" : "server", where, keyPrefix])).digest("hex").slice(0, 12);
}

function serverAddress(redisUrl: string): string {
  const checked = singleServerUrl(redisUrl);
  // A Unix socket's path or a port alone, as ioredis takes them.
  if (!checked.includes("://")) return /^\d+$/.test(checked) ? `localhost:${checked}` : checked;
  const url = new URL(checked);
  const database = Number(url.pathname.replace("/", "") || "0");
  return `${url.hostname || "localhost"}:${url.port || "6379"}/${database}`;
}
