// PORT is read as a port: blank means unset (8787), anything else must be 0–65535 (0: any free port), and a port in use is a one-line start-up error.
// Used to be wrong:
//   main.ts reads PORT with Number(process.env.PORT ?? 8787): a blank PORT (a compose file's
//   `PORT:` left empty, as HOST's comment in main.ts says happens) is Number("") = 0, and the
//   gateway silently listens on a random port the load balancer does not know. A PORT that is not
//   a port stops start-up with Node's "options.port should be >= 0 and < 65536", which never says
//   PORT; a port already in use crashes with an unhandled 'error' event and its stack.
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BIN = join(ROOT, "bin/tollgate.mjs");
let config: string;
beforeAll(() => {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-review-port-"));
  config = join(dir, "config.json");
  writeFileSync(config, JSON.stringify({
    providers: { openai: { type: "openai", apiKey: { env: "OPENAI_API_KEY" }, optional: true } },
    routes: { gpt: { targets: [{ provider: "openai", model: "gpt-4o" }] } },
    store: { path: join(dir, "ledger.jsonl") },
  }));
});

/** Runs `tollgate --config` with PORT set; resolves at the listening line (then stops it) or at exit. */
function run(port: string): Promise<{ listening?: string; exitCode?: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn("node", [BIN, "--config", config], { cwd: ROOT, env: { PATH: process.env.PATH ?? "", PORT: port, HOST: "127.0.0.1" }, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    const timer = setTimeout(() => { child.kill("SIGKILL"); resolve({ stderr: stderr + "\n<timed out>" }); }, 20_000);
    child.stderr.on("data", (d) => {
      stderr += d;
      const match = /listening on (\S+)/.exec(stderr);
      if (match) { clearTimeout(timer); child.kill("SIGKILL"); resolve({ listening: match[1], stderr }); }
    });
    child.on("exit", (code) => { clearTimeout(timer); resolve({ exitCode: code, stderr }); });
  });
}

describe("PORT", () => {
  it("a blank PORT is unset (default 8787), not a random port", async () => {
    const result = await run("");
    if (result.listening) expect(result.listening).toMatch(/:8787$/);
    // 8787 may be taken on a shared machine: then a refusal that names the port will do.
    else { expect(result.exitCode).not.toBe(0); expect(result.stderr).toMatch(/PORT|8787/); }
  }, 30_000);

  it.each(["abc", "70000", "8787x"])("PORT=%s stops start-up with a message that names PORT", async (port) => {
    const result = await run(port);
    expect(result.listening).toBeUndefined();
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain("PORT");
  }, 30_000);
});

describe("a port already in use", () => {
  let busy: net.Server;
  let busyPort: number;
  beforeAll(async () => {
    busy = net.createServer();
    await new Promise<void>((r) => busy.listen(0, "127.0.0.1", r));
    busyPort = (busy.address() as net.AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => busy.close(() => r())));

  it("stops start-up with one line naming the port and PORT, not an unhandled 'error' event's stack", async () => {
    const result = await run(String(busyPort));
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(String(busyPort));
    expect(result.stderr).toContain("PORT");
    expect(result.stderr).not.toContain("Unhandled 'error' event");
  }, 30_000);
});
