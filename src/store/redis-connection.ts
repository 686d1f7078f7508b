import { Cluster, Redis, type RedisOptions } from "ioredis";

/**
 * One Redis server or a Redis Cluster. The stores use only what both offer: commands, scripts
 * (`defineCommand`), pipelines whose keys share one slot, `status`, `quit` and `disconnect`.
 */
export type RedisClient = Redis | Cluster;

/** What every tollgate connection to Redis is given, whichever the kind. */
export type RedisClientOptions = {
  /** The longest wait for a reply before the command fails. */
  commandTimeoutMs: number;
};

/**
 * Connects to `url`: one server, or with `cluster` a Redis Cluster whose seed nodes `url` lists,
 * comma-separated (`redis://10.0.0.1:6379,redis://10.0.0.2:6379`; a bare `host:port` is a
 * `redis://` one). The cluster's other nodes are learned from the seeds. A node's user, password
 * and TLS (`rediss://`) come from the first seed.
 *
 * Neither kind queues commands while it is disconnected. A single server auto-pipelines (the
 * commands issued in one event-loop turn go in one write); a Cluster sends each command on its
 * own. Auto-pipelined there, ioredis neither retried nor re-read the slot map when a batch met a
 * slot that moved (MOVED), so after a resharding a batched command failed on every call; and it
 * placed a script by its first argument (the number of keys) instead of its first key, batching
 * it with commands bound for other nodes.
 */
export function connectRedis(url: string, cluster: boolean, { commandTimeoutMs }: RedisClientOptions): RedisClient {
  const perNode = { maxRetriesPerRequest: 3, commandTimeout: commandTimeoutMs } satisfies RedisOptions;
  if (!cluster) return new Redis(singleServerUrl(url), { ...perNode, enableAutoPipelining: true, enableOfflineQueue: false });
  const { nodes, credentials } = clusterSeeds(url);
  return new Cluster(nodes, {
    enableOfflineQueue: false,
    redisOptions: { ...perNode, ...credentials },
    // Seeds are reached by name, not by addresses ioredis looks up first: it looks all of them up
    // at once, and one name that no longer resolves failed every connect, with nothing logged.
    // With TLS a certificate names the host anyway (AWS ElastiCache, for one, needs this).
    dnsLookup: (address: string, callback: (error: null, address: string) => void) => callback(null, address),
  });
}

export class RedisUrlError extends Error {}

/**
 * One server's URL, checked before ioredis reads it: ioredis takes any string, and read
 * `http://cache:6380` as host "http", port 6379, and a list of cluster seeds as "Invalid URL".
 */
export function singleServerUrl(text: string): string {
  const trimmed = text.trim();
  // What ioredis takes besides a URL, as it takes it: a Unix socket's path, or a port alone.
  if (/^\/(?!\/)/.test(trimmed) || /^\d+$/.test(trimmed)) return trimmed;
  refuseMisspeltScheme(trimmed);
  const written = trimmed.includes("://") ? trimmed : `redis://${trimmed}`;
  let url: URL;
  try {
    url = new URL(written);
  } catch {
    // A comma in a URL that does not parse is a list of nodes (one in a password parses).
    if (trimmed.includes(",")) {
      throw new RedisUrlError('lists several nodes (a comma): for a Redis Cluster add "cluster": true to "store"; for one server write a single redis://host:port');
    }
    throw new RedisUrlError(`"${redact(trimmed)}" is not a URL; write redis://host:port (rediss:// for TLS), with /N for a database other than 0`);
  }
  if (url.protocol !== "redis:" && url.protocol !== "rediss:") throw new RedisUrlError(`"${redact(trimmed)}" is not a redis:// or rediss:// URL; write redis://host:port`);
  // The path is not printed: in a mistyped URL it may hold the password.
  if (!/^\/?\d*$/.test(url.pathname)) throw new RedisUrlError(`"${redact(trimmed)}" has a path that is not a database number; write redis://host:port, with /N for database N`);
  decodedCredentials(url);
  return written;
}

/** The seed nodes of a comma-separated list of `redis://` / `rediss://` URLs, and their credentials. */
export function clusterSeeds(list: string): { nodes: { host: string; port: number }[]; credentials: Pick<RedisOptions, "username" | "password" | "tls"> } {
  // A password with a comma is cut by the split: a piece without its "@" may be part of it, so
  // where the list holds credentials, only a piece that has its own "@" is quoted (redacted).
  const shown = (part: string) => (part.includes("@") || !list.includes("@") ? `"${redact(part)}"` : "a seed node (not shown: the list holds a password, which may contain a comma)");
  const urls = list
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part.length > 0)
    .map((part) => {
      refuseMisspeltScheme(part, shown(part));
      let url: URL;
      try {
        // A bare host:port, as cluster nodes are often listed, is a plain redis:// node.
        url = new URL(part.includes("://") ? part : `redis://${part}`);
      } catch {
        throw new RedisUrlError(`${shown(part)} is not a URL; write each seed node as redis://host:port (rediss:// for TLS), separated by commas`);
      }
      if (url.protocol !== "redis:" && url.protocol !== "rediss:") {
        throw new RedisUrlError(`${shown(part)} is not a redis:// or rediss:// URL; write each seed node as redis://host:port`);
      }
      // A cluster has only database 0: a URL naming another would silently mean something else.
      if (url.pathname !== "" && url.pathname !== "/" && url.pathname !== "/0") {
        throw new RedisUrlError(`${shown(part)} has a path; a Redis Cluster has only database 0, so drop it`);
      }
      return url;
    });
  if (urls.length === 0) throw new RedisUrlError("the variable is empty; write one or more seed nodes as redis://host:port, separated by commas");
  const first = urls[0]!;
  const credentials: Pick<RedisOptions, "username" | "password" | "tls"> = {};
  const { username, password } = decodedCredentials(first);
  if (username) credentials.username = username;
  if (password) credentials.password = password;
  if (first.protocol === "rediss:") credentials.tls = {};
  return { nodes: urls.map((url) => ({ host: url.hostname.replace(/^\[(.*)\]$/, "$1"), port: url.port ? Number(url.port) : 6379 })), credentials };
}

/**
 * `redis//host` and `redis:/host` (a ":" or "/" missing) would parse as host "redis" with the rest,
 * password included, as a path: refused before, naming the fix.
 */
function refuseMisspeltScheme(text: string, shown = `"${redact(text)}"`): void {
  // Not `redis/2`: a bare host named "redis" (a compose service) with database 2.
  if (/^rediss?(:\/(?!\/)|\/\/)/i.test(text)) throw new RedisUrlError(`${shown} misspells the scheme; write redis://host:port (rediss:// for TLS)`);
}

/** The URL's user and password, percent-decoded: a bare "%" in them is refused with the fix. */
function decodedCredentials(url: URL): { username: string; password: string } {
  try {
    return { username: decodeURIComponent(url.username), password: decodeURIComponent(url.password) };
  } catch {
    throw new RedisUrlError('has a user or password with a "%" that is not percent-encoding; write "%" as %25 (and "@", ":", "/" as %40, %3A, %2F)');
  }
}

/**
 * A seed as it may be printed: whatever stands between the scheme and the last "@" (user and
 * password) becomes ***. Done on the text, since an unparsable URL (a password with "/") must not
 * be printed either.
 */
function redact(text: string): string {
  const at = text.lastIndexOf("@");
  if (at < 0) return text;
  const scheme = text.indexOf("://");
  const start = scheme >= 0 && scheme < at ? scheme + 3 : 0;
  return `${text.slice(0, start)}***${text.slice(at)}`;
}

/**
 * Whether the server behind a single-server connection is in fact a Redis Cluster node: keys of
 * other nodes would then fail with MOVED on every request, so start-up says what to change.
 */
export async function isClusterNode(redis: Redis): Promise<boolean> {
  const info = await redis.info("cluster");
  return /^cluster_enabled:1\b/m.test(info);
}

/**
 * The `maxmemory-policy` of each server the client writes to that may evict keys (anything but
 * noeviction), read from INFO, which managed services that refuse CONFIG still answer.
 */
export async function evictionPolicies(redis: RedisClient): Promise<string[]> {
  const servers = redis instanceof Cluster ? redis.nodes("master") : [redis];
  const policies = await Promise.all(servers.map(async (server) => /^maxmemory_policy:(\S+)/m.exec(await server.info("memory"))?.[1]));
  return [...new Set(policies.filter((policy): policy is string => policy !== undefined && policy !== "noeviction"))];
}
