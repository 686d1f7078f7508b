import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { sha256 } from "./support/gateway.ts";

// A Groq key pasted as {"env": "<the key>"} on an optional provider: tollgate started, logged
// "set gsk_… and restart tollgate", and answered every client of the route with a 503 saying the
// same. PRODUCT.md: "Provider keys never reach clients or logs." Now start-up stops, naming the
// field and not the key.

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BIN = fileURLToPath(new URL("../bin/tollgate.mjs", import.meta.url));
const GROQ_KEY = "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";

it("a provider key written where its variable's name goes stops start-up, and the log does not show it", () => {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-key-as-name-"));
  const config = join(dir, "tollgate.json");
  writeFileSync(config, JSON.stringify({
    providers: { groq: { type: "openai-compatible", baseUrl: "https://api.groq.com/openai/v1", apiKey: { env: GROQ_KEY }, optional: true } },
    routes: { fast: { targets: [{ provider: "groq", model: "llama-3.1-8b-instant" }] } },
    keys: [{ id: "app", team: "t", hash: sha256("tg_app_key_0123456789") }],
    store: { path: join(dir, "ledger.jsonl") },
  }));
  let output = "";
  let exitCode = 0;
  try {
    // Were it to start, it would serve until the timeout: the test then fails on the exit code.
    output = execFileSync("node", [BIN, "--config", config], { cwd: ROOT, env: { PATH: process.env.PATH ?? "", PORT: "0", HOST: "127.0.0.1" }, encoding: "utf8", stdio: "pipe", timeout: 20_000 });
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; status?: number | null };
    output = `${failed.stdout ?? ""}${failed.stderr ?? ""}`;
    exitCode = failed.status ?? -1;
  }
  expect(exitCode).toBeGreaterThan(0);
  expect(output).toContain("providers.groq.apiKey.env: this looks like the secret itself");
  expect(output).not.toContain(GROQ_KEY);
});
