import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type RunningGateway } from "../src/node/serve.ts";
import { ANTHROPIC_KEY, OPENAI_KEY, postJson, sha256, testConfig } from "./support/gateway.ts";
import { startMockProviders, type MockProviders } from "./support/msw/index.ts";
import { spawnGateway, startUpstream } from "./support/ops-rig.ts";
import { until } from "./support/until.ts";
import { CLEAR_OF_MIDNIGHT_TIMEOUT_MS, clearOfMidnight } from "./support/clear-of-midnight.ts";

// Two gateways on one embedded store (no Redis) each kept budgets in their own memory, so each
// enforced a hard budget alone: a review spent 1.84x one with two processes on one store.path.
// Now the path is locked while a gateway runs: a second one waits for it to stop (a restart's new
// process, started while the old one drains) and fails start-up if it does not.
//
// The msw OpenAI stand-in: "Hello there" costs 2 × 2500 + 4 × 10,000 = 45,000 nano-dollars.

const today = () => new Date().toISOString().slice(0, 10);
const budgetConfig = (path: string) => {
  const base = testConfig();
  return { ...base, routes: { ...base.routes, budgeted: { targets: [{ provider: "openai", model: "gpt-4o" }], budget: { usd: 0.002, window: "day" } } }, store: { path } };
};

let mocks: MockProviders;
let dir: string;
beforeAll(() => clearOfMidnight(), CLEAR_OF_MIDNIGHT_TIMEOUT_MS);
beforeAll(async () => {
  mocks = startMockProviders();
  dir = await mkdtemp(join(tmpdir(), "tollgate-store-lock-"));
});
afterAll(async () => {
  mocks?.close();
  await rm(dir, { recursive: true, force: true });
});

function start(path: string, lines: string[], storeLockWaitMs?: number): Promise<RunningGateway> {
  return startGateway({
    config: budgetConfig(path),
    port: 0,
    upstreamTransport: "fetch",
    env: { OPENAI_API_KEY: OPENAI_KEY, ANTHROPIC_API_KEY: ANTHROPIC_KEY },
    log: (line) => lines.push(line),
    ...(storeLockWaitMs !== undefined ? { storeLockWaitMs } : {}),
  });
}

const ask = (gateway: RunningGateway) => postJson(gateway, "/v1/chat/completions", { model: "budgeted", max_tokens: 20, messages: [{ role: "user", content: "Hello there" }] });

/** The budget's level once no reservation is left on it. */
async function settledLevel(gateway: RunningGateway) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const [level] = await gateway.admissionStore.levels([`route:budgeted|${today()}`], Date.now());
    if (level!.reservedNano === 0 || Date.now() > deadline) return level!;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const waiting = (lines: string[]) => lines.filter((line) => /store\.path .* is in use by pid \d+ .*: waiting up to/.test(line));

describe("two gateways on one embedded store.path", () => {
  it("the second does not serve: it waits, says once who holds the path, then fails naming the path, the pid and the fix", async () => {
    const path = join(dir, "shared.jsonl");
    const first = await start(path, []);
    try {
      expect((await ask(first)).status).toBe(200);
      const lines: string[] = [];
      const failure = await start(path, lines, 500).then(
        async (second) => {
          await second.close({ drainMs: 0 });
          return "the second gateway started";
        },
        (error: Error) => error.message,
      );
      expect(failure).toMatch(/^invalid tollgate config:\n {2}- store\.path: .* is in use by another gateway/);
      const holder = JSON.parse(readFileSync(`${path}.lock`, "utf8")) as { pid: number; host: string; startedAt: string };
      expect(failure).toBe(
        `invalid tollgate config:\n  - store.path: ${path} is in use by another gateway (pid ${process.pid} on ${holder.host}, ` +
          `started ${holder.startedAt}; lock ${path}.lock), which did not stop within 1 s. ` +
          "Without Redis, budgets live in one process's memory, so two gateways on one store.path would each enforce them alone: " +
          `give each gateway its own store.path, or use Redis (store.redisUrl) so that instances share budgets. If no gateway runs there, remove ${path}.lock`,
      );
      expect(waiting(lines)).toHaveLength(1);
      // The first still serves, and its lock is still its own.
      expect((await ask(first)).status).toBe(200);
      expect(JSON.parse(readFileSync(`${path}.lock`, "utf8")).pid).toBe(process.pid);
    } finally {
      await first.close();
    }
    expect(existsSync(`${path}.lock`)).toBe(false);
  });

  it("a rolling restart: the new gateway waits while the old one drains, then serves with the old one's spend", async () => {
    const path = join(dir, "rolling.jsonl");
    const old = await start(path, []);
    let oldClosed = false;
    let fresh: RunningGateway | undefined;
    try {
      for (let i = 0; i < 3; i++) expect((await ask(old)).status).toBe(200);
      expect(await settledLevel(old)).toEqual({ spentNano: 3 * 45_000, reservedNano: 0 });
      const lines: string[] = [];
      const starting = start(path, lines, 60_000);
      await until(() => waiting(lines).length === 1, () => `the new gateway to wait for the old one; its log:\n${lines.join("\n")}`);
      oldClosed = true;
      await old.close(); // writes out its ledger and checkpoint, then lets go of the path
      fresh = await starting;
      expect(await settledLevel(fresh)).toEqual({ spentNano: 3 * 45_000, reservedNano: 0 });
      expect((await ask(fresh)).status).toBe(200);
      expect(await settledLevel(fresh)).toEqual({ spentNano: 4 * 45_000, reservedNano: 0 });
    } finally {
      if (!oldClosed) await old.close();
      await fresh?.close();
    }
  });

  it("a gateway process killed outright leaves its lock, and the next start takes it over without waiting", async () => {
    const upstream = await startUpstream();
    const path = join(dir, "crashed.jsonl");
    try {
      const crashed = await spawnGateway(dir, "crashed", {
        providers: { gpu: { type: "openai-compatible", baseUrl: upstream.url } },
        routes: { chat: { targets: [{ provider: "gpu", model: "m" }] } },
        keys: [{ id: "app", team: "t", hash: sha256("tg_lock_test_key_0123456789") }],
        store: { path },
      });
      const pid = crashed.child.pid!;
      crashed.child.kill("SIGKILL");
      await crashed.exited;
      expect(JSON.parse(readFileSync(`${path}.lock`, "utf8")).pid).toBe(pid);

      const lines: string[] = [];
      const next = await start(path, lines, 60_000);
      try {
        expect(lines.filter((line) => line.includes(`taking over the lock of pid ${pid} `))).toHaveLength(1);
        expect(waiting(lines)).toEqual([]);
        expect((await ask(next)).status).toBe(200);
      } finally {
        await next.close();
      }
    } finally {
      await upstream.close();
    }
  });
});
