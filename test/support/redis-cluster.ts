// A real Redis Cluster for tests: three redis-server processes in cluster mode on free ports, the
// 16384 hash slots split between them, joined with CLUSTER MEET. No replicas: the tests check that
// every key tollgate writes lands, and is read back, across slots and nodes; failover is Redis's.
// Always private (REDIS_URL's server is a single node, whatever it is).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { findFreePort, PortTakenError, startRedisOn, type RedisHandle } from "./redis-server.ts";

export interface RedisClusterHandle {
  /** The seed nodes as `store.redisUrl` takes them with `"cluster": true`: comma-separated URLs. */
  url: string;
  /** Each master's URL, in the order of the slots it serves (0–5460, 5461–10921, 10922–16383). */
  nodeUrls: string[];
  /** The URL of the master that serves `key`'s slot (as the slots were first assigned). */
  nodeFor(key: string): Promise<string>;
  /** The hash slot of `key`. */
  slotOf(key: string): Promise<number>;
  /** Gives an empty slot to another master, as a resharding does (its keys must be gone first). */
  moveSlot(slot: number, toIndex: number): Promise<void>;
  /** Stops one master (the cluster then lacks its slots: a node outage). */
  stopNode(index: number): Promise<void>;
  stop(): Promise<void>;
}

const SLOTS = 16_384;
const READY_TIMEOUT_MS = 15_000;
const PORT_ATTEMPTS = 5;

export async function startRedisCluster(masters = 3): Promise<RedisClusterHandle> {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-cluster-"));
  const nodes: (RedisHandle & { busPort: number })[] = [];
  const clients: Redis[] = [];
  const stop = async () => {
    for (const client of clients) client.disconnect();
    await Promise.all(nodes.map((node) => node.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let index = 0; index < masters; index++) nodes.push(await startNode(dir));
    for (const node of nodes) clients.push(new Redis(node.url, { maxRetriesPerRequest: 1 }));
    const perNode = Math.ceil(SLOTS / masters);
    await Promise.all(clients.map((client, index) => client.call("CLUSTER", "ADDSLOTSRANGE", index * perNode, Math.min(SLOTS, (index + 1) * perNode) - 1)));
    for (const node of nodes.slice(1)) await clients[0]!.call("CLUSTER", "MEET", "127.0.0.1", new URL(node.url).port, node.busPort);
    await untilEveryNodeSeesTheCluster(clients, masters);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url: nodes.map((node) => node.url).join(","),
    nodeUrls: nodes.map((node) => node.url),
    async nodeFor(key) {
      const slot = Number(await clients[0]!.call("CLUSTER", "KEYSLOT", key));
      return nodes[Math.floor(slot / Math.ceil(SLOTS / masters))]!.url;
    },
    slotOf: async (key) => Number(await clients[0]!.call("CLUSTER", "KEYSLOT", key)),
    async moveSlot(slot, toIndex) {
      const target = (await clients[toIndex]!.call("CLUSTER", "MYID")) as string;
      // The new owner first, then the others (the order redis-cli --cluster reshard uses).
      await clients[toIndex]!.call("CLUSTER", "SETSLOT", slot, "NODE", target);
      for (const [index, client] of clients.entries()) if (index !== toIndex) await client.call("CLUSTER", "SETSLOT", slot, "NODE", target);
    },
    async stopNode(index) {
      clients[index]!.disconnect();
      await nodes[index]!.stop();
    },
    stop,
  };
}

/** One node: a free client port and a free cluster-bus port (the default, port + 10000, may be taken). */
async function startNode(dir: string): Promise<RedisHandle & { busPort: number }> {
  let lastError: Error | undefined;
  for (let attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
    const [port, busPort] = [await findFreePort(), await findFreePort()];
    if (port === busPort) continue;
    const extraArgs = ["--cluster-enabled", "yes", "--cluster-config-file", join(dir, `nodes-${port}.conf`), "--cluster-port", String(busPort)];
    try {
      return { ...(await startRedisOn(port, { dir, extraArgs })), busPort };
    } catch (error) {
      if (!(error instanceof PortTakenError)) throw error;
      lastError = error;
    }
  }
  throw new Error(`could not start a cluster node after ${PORT_ATTEMPTS} ports`, { cause: lastError });
}

async function untilEveryNodeSeesTheCluster(clients: Redis[], masters: number): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = "";
  while (Date.now() < deadline) {
    const infos = await Promise.all(clients.map((client) => client.call("CLUSTER", "INFO") as Promise<string>));
    if (infos.every((info) => /cluster_state:ok/.test(info) && new RegExp(`cluster_known_nodes:${masters}\\b`).test(info))) return;
    last = infos.join("\n---\n");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the Redis Cluster did not form within ${READY_TIMEOUT_MS} ms:\n${last}`);
}
