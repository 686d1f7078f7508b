// tollgate under test, in its own process: startGateway() from src/node/serve.ts with the bench config.
// If that module does not exist yet (or fails to start), it reports "unavailable" and exits.
// Metering is on: cost records and aggregates go to the Redis named by TOLLGATE_BENCH_REDIS_URL.
// Usage: tsx bench/tollgate-server.ts <port> <upstream origin>
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { announce, BENCH_REDIS_VARIABLE, portFromArgs, tollgateConfig, upstreamFromArgs } from "./lib/shared.ts";

type StartGateway = (o: { config: unknown; port: number; host?: string; log?: (line: string) => void }) => Promise<{ url: string; close(): Promise<void> }>;

const moduleUrl = new URL("../src/node/serve.ts", import.meta.url);

async function main(): Promise<void> {
  if (!existsSync(fileURLToPath(moduleUrl))) {
    await announce({ type: "unavailable", reason: "src/node/serve.ts does not exist yet" });
    process.exit(0);
  }
  const upstreamPort = Number(upstreamFromArgs().port);
  try {
    // A variable specifier keeps tsc from requiring the module while it does not exist.
    const mod = (await import(moduleUrl.href)) as { startGateway?: StartGateway };
    if (typeof mod.startGateway !== "function") throw new Error("src/node/serve.ts has no startGateway export");
    if (!process.env[BENCH_REDIS_VARIABLE]) throw new Error(`${BENCH_REDIS_VARIABLE} is not set: the runner starts a Redis for metering`);
    const gw = await mod.startGateway({ config: tollgateConfig(upstreamPort), port: portFromArgs(), host: "127.0.0.1" });
    process.once("SIGTERM", () => void gw.close().finally(() => process.exit(0)));
    await announce({ type: "ready", port: Number(new URL(gw.url).port) || portFromArgs() });
  } catch (err) {
    await announce({ type: "unavailable", reason: `startGateway failed: ${(err as Error)?.stack ?? String(err)}` });
    process.exit(0);
  }
}
void main();
