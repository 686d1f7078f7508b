import { spawn } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { networkInterfaces } from "node:os";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";
import { describe, expect, it } from "vitest";
import { bundleWorker } from "./support/workers.ts";

// The bundled example config accepts the public demo key `tollgate-dev-key` (printed in the
// README): `npm start` with it and no HOST listens on 127.0.0.1 only, and a Worker without
// TOLLGATE_CONFIG refuses to serve it unless TOLLGATE_EXAMPLE_CONFIG is "allow".
// Was: HOST defaulted to 0.0.0.0 (and a Worker fell back to the example), so a gateway started as
// the README shows, with real provider keys, spent them for anyone who sent the demo key.

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BIN = fileURLToPath(new URL("../bin/tollgate.mjs", import.meta.url));
const external = Object.values(networkInterfaces())
  .flat()
  .find((address) => address && address.family === "IPv4" && !address.internal)?.address;

// How another machine reaches this one: its network address, or on a machine with none (a
// sandbox), another loopback address, which on Linux reaches a server listening on every interface
// but not one listening on 127.0.0.1 alone. Either way the test first proves the probe can tell.
const probeHost = external ?? "127.0.0.2";

describe("npm start on the bundled example config", () => {
  // A blank HOST (a compose file's `HOST:` left empty) counts as unset: Node would take "" for
  // every interface, and it used to, while the log said 127.0.0.1 only.
  it.each([["no HOST", {}], ["a blank HOST", { HOST: "" }]])("does not accept the public demo key from another machine with %s", async (_what, hostEnv: Record<string, string>) => {
    const control = createServer((_request, response) => response.end("reached"));
    await new Promise<void>((resolve) => control.listen(0, "0.0.0.0", resolve));
    try {
      const reached = await fetch(`http://${probeHost}:${(control.address() as AddressInfo).port}/`, { headers: { connection: "close" } });
      expect(await reached.text(), `a server on 0.0.0.0 answers at ${probeHost}`).toBe("reached");
    } finally {
      control.closeAllConnections();
      control.close();
    }
    const child = spawn("node", [BIN], {
      cwd: ROOT,
      // No HOST, no config: a fresh clone started as the README shows, with a cloud key set.
      env: { PATH: process.env.PATH ?? "", PORT: "0", OPENAI_API_KEY: "sk-test-not-a-real-key", ...hostEnv },
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      let log = "";
      const port = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no listening line:\n${log}`)), 20_000);
        child.stderr.on("data", (chunk) => {
          log += chunk;
          const match = /listening on http:\/\/\S+:(\d+)/.exec(log);
          if (match?.[1]) {
            clearTimeout(timer);
            resolve(match[1]);
          }
        });
        child.on("exit", (code) => reject(new Error(`exited ${code}:\n${log}`)));
      });
      expect(log).toContain("the bundled example config accepts the public demo key `tollgate-dev-key`, so it listens on 127.0.0.1 only");
      // A client on another machine reaches the gateway by its network address.
      const outcome = await fetch(`http://${probeHost}:${port}/v1/models`, { headers: { authorization: "Bearer tollgate-dev-key" } }).then(
        async (response) => `HTTP ${response.status} ${await response.text()}`,
        (error: Error) => `unreachable (${(error.cause as Error | undefined)?.message ?? error.message})`,
      );
      expect(outcome).not.toMatch(/^HTTP 200/);
      // This machine still can.
      expect((await fetch(`http://127.0.0.1:${port}/v1/models`, { headers: { authorization: "Bearer tollgate-dev-key" } })).status).toBe(200);
    } finally {
      child.kill("SIGKILL");
    }
  });
});

describe("a Worker without TOLLGATE_CONFIG", () => {
  it("refuses to serve the example config with a 503 saying what to set, unless TOLLGATE_EXAMPLE_CONFIG is \"allow\"", async () => {
    const bundle = await bundleWorker();
    const refusing = new Miniflare({ ...bundle.options, handleRuntimeStdio: () => {} });
    const allowing = new Miniflare({ ...bundle.options, bindings: { TOLLGATE_EXAMPLE_CONFIG: "allow" }, handleRuntimeStdio: () => {} });
    try {
      const models = (miniflare: Miniflare, headers: Record<string, string> = {}) =>
        miniflare.dispatchFetch("http://gateway/v1/models", { headers: { authorization: "Bearer tollgate-dev-key", ...headers } });
      const refused = await models(refusing);
      expect(refused.status).toBe(503);
      expect(await refused.json()).toMatchObject({ error: { type: "server_error", code: "not_configured", message: expect.stringMatching(/^tollgate has no config: set the TOLLGATE_CONFIG variable/) } });
      const refusedAnthropic = await models(refusing, { "anthropic-version": "2023-06-01" });
      expect(await refusedAnthropic.json()).toMatchObject({ type: "error", error: { type: "overloaded_error", message: expect.stringContaining("TOLLGATE_CONFIG") } });
      expect((await models(allowing)).status).toBe(200);
    } finally {
      await refusing.dispose();
      await allowing.dispose();
      bundle.remove();
    }
  });
});
