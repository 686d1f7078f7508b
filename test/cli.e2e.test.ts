import { spawn, execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import OpenAI from "openai";
import { z } from "zod";
import { describe, expect, it } from "vitest";
import { configSchema } from "../src/config/config-schema.ts";
import { sha256 } from "./support/gateway.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BIN = fileURLToPath(new URL("../bin/tollgate.mjs", import.meta.url));

describe("tollgate keys create", () => {
  it("prints a new key once and the sha256 hash to put in config", () => {
    const output = execFileSync("node", [BIN, "keys", "create", "--id", "search-app", "--team", "search"], { encoding: "utf8" });
    const key = /^key: {2}(tg_\S+)$/m.exec(output)?.[1];
    const hash = /^hash: (sha256:[0-9a-f]{64})$/m.exec(output)?.[1];
    expect(key).toBeDefined();
    expect(hash).toBe(sha256(key!));
    const entry = JSON.parse(output.trim().split("\n").at(-1)!);
    expect(entry).toEqual({ id: "search-app", team: "search", hash });
  });
});

describe("tollgate keys create --admin", () => {
  it("prints the admin key once and the entry for \"admin\", not for \"keys\"", () => {
    const output = execFileSync("node", [BIN, "keys", "create", "--admin"], { encoding: "utf8" });
    const key = /^key: {2}(tg_\S+)$/m.exec(output)?.[1];
    expect(output).toContain('Put this in your config as "admin":');
    expect(JSON.parse(output.trim().split("\n").at(-1)!)).toEqual({ keyHash: sha256(key!) });
  });

  it("takes no --id or --team", () => {
    const run = () => execFileSync("node", [BIN, "keys", "create", "--admin", "--team", "ops"], { encoding: "utf8", stdio: "pipe" });
    expect(run).toThrow(/the admin key has no --id or --team/);
  });
});

describe("tollgate --help", () => {
  it("prints the usage and exits, instead of starting a server", () => {
    for (const args of [["--help"], ["-h"], ["help"], ["start", "--help"]]) {
      const output = execFileSync("node", [BIN, ...args], { encoding: "utf8", timeout: 20_000 });
      expect(output).toContain("tollgate keys create");
    }
  });
});

describe("the shipped config files", () => {
  it("config/tollgate.schema.json is the schema generated from the code (run `npm run schema`)", () => {
    const onDisk = JSON.parse(readFileSync(`${ROOT}/config/tollgate.schema.json`, "utf8"));
    expect(onDisk).toEqual(JSON.parse(JSON.stringify(z.toJSONSchema(configSchema, { io: "input" }))));
  });
});

describe("npm start on the embedded defaults", () => {
  it("serves the example config with no environment set and reports the missing optional keys", async () => {
    const child = spawn("node", [BIN], { cwd: ROOT, env: { PATH: process.env.PATH ?? "", PORT: "0", HOST: "127.0.0.1" }, stdio: ["ignore", "pipe", "pipe"] });
    let log = "";
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no listening line:\n${log}`)), 20_000);
        child.stderr.on("data", (chunk) => {
          log += chunk;
          const match = /listening on (http:\/\/\S+)/.exec(log);
          if (match?.[1]) {
            clearTimeout(timer);
            resolve(match[1]);
          }
        });
        child.on("exit", (code) => reject(new Error(`exited ${code}:\n${log}`)));
      });
      expect(log).toContain('provider "openai" has no API key: set OPENAI_API_KEY and restart tollgate');
      expect(log).toContain('provider "anthropic" has no API key: set ANTHROPIC_API_KEY and restart tollgate');
      expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ status: "ok", providers: { openai: "unavailable", anthropic: "unavailable", local: "ready" }, ledger: { writes: "ok", pendingRecords: 0 }, budgets: { store: "ok" } });
      const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: "tollgate-dev-key", maxRetries: 0 });
      const failure = await client.chat.completions.create({ model: "gpt", messages: [{ role: "user", content: "hi" }] }).catch((error) => error);
      expect(failure.status).toBe(503);
      expect(failure.message).toContain("set OPENAI_API_KEY");
      // A stop says so, and says when it is done.
      // "close", not "exit": the process may exit before its last lines have been read.
      const closed = new Promise((resolve) => child.once("close", resolve));
      child.kill("SIGTERM");
      await closed;
      expect(log).toContain("[tollgate] SIGTERM: stopping; streams in flight get up to 8 s, then are cut (and recorded); other answers up to 15 s");
      expect(log).toContain("[tollgate] stopped: records written");
    } finally {
      child.kill("SIGTERM");
    }
  });

  // A container runs `npm start` as its process and stops it with SIGTERM. npm passes the signal
  // to the script's shell only; the script was `tsx src/node/main.ts`, so the shell died and left
  // the gateway running, orphaned, until the container was killed: no drain, no records flushed.
  it("npm start hands SIGTERM to the gateway itself, which drains and writes its records", async () => {
    const npm = spawn("npm", ["start"], { cwd: ROOT, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", PORT: "0", HOST: "127.0.0.1" }, stdio: ["ignore", "pipe", "pipe"] });
    let log = "";
    npm.stdout.on("data", (chunk) => (log += chunk));
    npm.stderr.on("data", (chunk) => (log += chunk));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no listening line:\n${log}`)), 30_000);
        const look = () => {
          const match = /listening on (http:\/\/\S+)/.exec(log);
          if (match?.[1]) {
            clearTimeout(timer);
            resolve(match[1]);
          }
        };
        npm.stderr.on("data", look);
        npm.on("exit", (code) => reject(new Error(`exited ${code}:\n${log}`)));
      });
      // "close", not "exit": the process may exit before its output has all been read.
      const closed = new Promise((resolve) => npm.once("close", resolve));
      npm.kill("SIGTERM");
      await closed;
      expect(log).toContain("[tollgate] stopped: records written");
      // Nothing is left listening.
      await expect(fetch(`${url}/healthz`)).rejects.toThrow();
    } finally {
      npm.kill("SIGKILL");
    }
  });

  it.each([
    ["--config FILE", ["--config", `${ROOT}/test/fixtures/needs-openai-key.json`], {}],
    ["TOLLGATE_CONFIG", [], { TOLLGATE_CONFIG: `${ROOT}/test/fixtures/needs-openai-key.json` }],
  ])("reads a user config from %s and stops with a clear message when its key variable is not set", (_how, args, env) => {
    let stderr = "";
    let exitCode = 0;
    try {
      execFileSync("node", [BIN, ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? "", PORT: "0", ...env }, encoding: "utf8", stdio: "pipe" });
    } catch (error) {
      stderr = String((error as { stderr?: string }).stderr);
      exitCode = (error as { status?: number }).status ?? 0;
    }
    expect(exitCode).toBe(1);
    expect(stderr).toContain('providers.openai.apiKey: environment variable OPENAI_API_KEY is not set; set it, or mark the provider "optional": true');
  });
});

describe("tollgate's options", () => {
  // A mistyped flag used to be ignored: `--confg mine.json` started the example config instead.
  it.each([
    [["--confg", "mine.json"], "tollgate: Unknown option '--confg'"],
    [["start", "--config"], "tollgate: Option '--config <value>' argument missing"],
    [["start", "mine.json"], "tollgate: Unexpected argument 'mine.json'"],
    [["keys", "create", "--name", "x"], "tollgate: Unknown option '--name'"],
    // `keys` is a command: it was reported as an unknown one.
    [["keys"], '"keys" takes a subcommand: `keys create`'],
    [["keys", "list"], '"keys" takes a subcommand: `keys create`'],
  ])("%j stops with the usage instead of starting", (args, message) => {
    let stderr = "";
    let exitCode = 0;
    try {
      execFileSync("node", [BIN, ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? "", PORT: "0" }, encoding: "utf8", stdio: "pipe", timeout: 20_000 });
    } catch (error) {
      stderr = String((error as { stderr?: string }).stderr);
      exitCode = (error as { status?: number }).status ?? 0;
    }
    expect(exitCode).toBe(2);
    expect(stderr).toContain(message);
    expect(stderr).toContain("usage:");
  });

  it("takes --config=FILE as well as --config FILE", () => {
    let stderr = "";
    try {
      execFileSync("node", [BIN, `--config=${ROOT}/test/fixtures/needs-openai-key.json`], { cwd: ROOT, env: { PATH: process.env.PATH ?? "", PORT: "0" }, encoding: "utf8", stdio: "pipe" });
    } catch (error) {
      stderr = String((error as { stderr?: string }).stderr);
    }
    expect(stderr).toContain("environment variable OPENAI_API_KEY is not set");
  });
});
