import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { findFreePort } from "./support/redis-server.ts";
import { APP_KEY, sha256 } from "./support/gateway.ts";
import { spawnGateway, startUpstream } from "./support/ops-rig.ts";

// A stop that could neither write nor keep cost records ends with a line saying how many were
// lost, and exits 1. Was: "[tollgate] stopped: records written" and exit 0 right after the
// "nor kept" error: the operator's last line and the supervisor's exit status both said all was well.

const dir = mkdtempSync(join(tmpdir(), "tollgate-stop-after-loss-"));
const cleanups: (() => void)[] = [];
afterAll(() => cleanups.forEach((cleanup) => cleanup()));

it("a stop that lost cost records says how many and exits 1", async () => {
  const upstream = await startUpstream();
  const kept = join(dir, "kept");
  mkdirSync(kept);
  const gateway = await spawnGateway(
    dir,
    "cfg",
    {
      providers: { local: { type: "openai-compatible", baseUrl: upstream.url, pricing: { default: { inputPerMillion: 1, outputPerMillion: 2 } } } },
      routes: { local: { targets: [{ provider: "local", model: "tiny" }] } },
      keys: [{ id: "app", team: "search", hash: sha256(APP_KEY) }],
      store: { redisUrl: { env: "REDIS_URL" }, path: join(kept, "ledger.jsonl") },
      server: { drainStreamsSeconds: 1, drainAnswersSeconds: 2 },
    },
    { REDIS_URL: `redis://127.0.0.1:${await findFreePort()}` }, // Redis away the whole time
  );
  cleanups.push(() => gateway.child.kill("SIGKILL"), () => void upstream.close());
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "local", messages: [{ role: "user", content: "hi" }] }),
  });
  expect(response.status).toBe(200);
  // Where the record would be kept is gone since start-up (checked then), and a file in its place.
  rmSync(kept, { recursive: true });
  writeFileSync(kept, "");
  gateway.child.kill("SIGTERM");
  const exited = await gateway.exited;
  const lines = gateway.log().trim().split("\n");
  expect(lines.some((line) => line.includes("1 cost records could not be written before shutdown, nor kept"))).toBe(true);
  expect({ last: lines.at(-1), code: exited.code }).toEqual({ last: "[tollgate] stopped: 1 cost records and 0 budget settlements lost, neither written nor kept (see the errors above)", code: 1 });
}, 60_000);
