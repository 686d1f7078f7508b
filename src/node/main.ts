import { parseArgs } from "node:util";
import { z } from "zod";
import { generateKey, hashKey } from "../auth/key-hash.ts";
import { configSchema } from "../config/config-schema.ts";
import { ConfigError } from "../config/resolve-config.ts";
import { chooseConfigPath, EXAMPLE_CONFIG_PATH, readConfigFile } from "./load-config-file.ts";
import { startGateway, WRITE_OUT_MS } from "./serve.ts";
import { oneLine } from "./one-line.ts";

// The `tollgate` command:
//   tollgate [start] [--config FILE]        serve (PORT, default 8787)
//   tollgate keys create [--id ID] [--team TEAM] | --admin
//   tollgate schema                         print the config's JSON Schema
//   tollgate help | --help | -h             print this

const USAGE = `usage:
  tollgate [start] [--config FILE]          serve (PORT, default 8787; HOST, default 0.0.0.0, or 127.0.0.1 for a config with the
                                            demo key; config also from TOLLGATE_CONFIG, else the bundled example)
  tollgate keys create [--id ID] [--team TEAM]   print a new virtual key once, and the hash for the config
  tollgate keys create --admin              the same for the admin key (its hash goes in "admin")
  tollgate schema                           print the config's JSON Schema
`;

class UsageError extends Error {}

/**
 * A command's `--name VALUE` (or `--name=VALUE`) options; anything else stops with the usage.
 * A mistyped `--confg x.json` used to be ignored, and the gateway started on the example config.
 */
function options(args: string[], names: string[], flags: string[] = []): Record<string, string | undefined> & Record<string, boolean | undefined> {
  const known = Object.fromEntries([...names.map((name) => [name, { type: "string" as const }]), ...flags.map((flag) => [flag, { type: "boolean" as const }])]);
  try {
    return parseArgs({ args, options: known, strict: true, allowPositionals: false }).values as Record<string, string | undefined> & Record<string, boolean | undefined>;
  } catch (error) {
    throw new UsageError(`tollgate: ${(error as Error).message}`);
  }
}

/** sha256 of `tollgate-dev-key`, the demo key the example config accepts and the README prints. */
const DEMO_KEY_HASH = "sha256:264b569076c044187d7d721344697fa6fe227c3f68e6e8752f7c5477a860d9ab";

const argv = process.argv.slice(2);
const wantsHelp = argv.includes("--help") || argv.includes("-h") || argv[0] === "help";
const command = wantsHelp ? "help" : argv[0] && !argv[0].startsWith("-") ? argv[0] : "start";

try {
  if (command === "help") process.stdout.write(USAGE);
  else if (command === "start") await start(options(argv[0] === "start" ? argv.slice(1) : argv, ["config"]));
  else if (command === "keys" && argv[1] === "create") await createKey(options(argv.slice(2), ["id", "team"], ["admin"]));
  else if (command === "schema") {
    options(argv.slice(1), []);
    process.stdout.write(JSON.stringify(z.toJSONSchema(configSchema, { io: "input" }), null, 2) + "\n");
  } else if (command === "keys") {
    console.error(`"keys" takes a subcommand: \`keys create\` (it makes a key and prints its hash; keys are listed in your config only)\n${USAGE}`);
    process.exitCode = 2;
  } else {
    console.error(`unknown command "${argv.join(" ")}"\n${USAGE}`);
    process.exitCode = 2;
  }
} catch (error) {
  if (error instanceof UsageError) {
    console.error(`${error.message}\n${USAGE}`);
    process.exitCode = 2;
  } else {
    console.error(error instanceof ConfigError || error instanceof Error ? error.message : error);
    process.exitCode = 1;
  }
}

async function start({ config: configFlag }: { config?: string }) {
  const path = chooseConfigPath(configFlag, process.env);
  const config = readConfigFile(path);
  // A config that accepts the public demo key spends its provider keys for anyone who can reach
  // it: unless HOST says otherwise, only this machine can.
  const { keys, admin } = config as { keys?: unknown; admin?: { keyHash?: unknown } };
  const demo = admin?.keyHash === DEMO_KEY_HASH || (Array.isArray(keys) && keys.some((key) => key?.hash === DEMO_KEY_HASH));
  const port = portFrom(process.env.PORT);
  // A blank HOST (a compose file's `HOST:` left empty) is unset, not "every interface" as Node takes "".
  const hostSetting = process.env.HOST?.trim() || undefined;
  const host = hostSetting ?? (demo ? "127.0.0.1" : "0.0.0.0");
  const gateway = await startGateway({ config, port, host });
  if (demo) {
    const which = path === EXAMPLE_CONFIG_PATH ? "the bundled example config" : `config ${path}`;
    const reach = hostSetting
      ? `: anyone who can reach it on ${host} may spend its provider keys`
      : ", so it listens on 127.0.0.1 only; HOST=0.0.0.0 opens it to the network (make a key and a config of your own first)";
    console.error(oneLine(`[tollgate] ${which} accepts the public demo key \`tollgate-dev-key\`${reach}`));
  }
  // Finish in-flight answers, but do not let a long stream hold a restart (by default 8 s: it then
  // ends with an error event saying the gateway stopped, and is recorded as an error). An answer
  // that is not streamed is all-or-nothing (cut, the client's SDK retries it and the provider is
  // paid twice), so it gets longer (15 s). Then the records (2 s), the budget settlements (one
  // store timeout, 2 s) and the ledger (5 s, a write in flight up to 2 s more) are written out or
  // kept: 11 s at most. The exit 13 s after the drain
  // (28 s by default) is for an exporter or store that does not answer, before a supervisor's
  // SIGKILL (Kubernetes: at 30 s).
  const { streamDrainMs, drainMs } = gateway.drainOnStop;
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    // A second signal (Ctrl-C, then the supervisor's SIGTERM) must not exit before the first
    // stop has written out the records of the streams it cut.
    if (stopping) return;
    stopping = true;
    console.error(`[tollgate] ${signal}: stopping; streams in flight get up to ${streamDrainMs / 1000} s, then are cut (and recorded); other answers up to ${drainMs / 1000} s`);
    // A stop that lost records exits 1 and its last line says so: "records written" and 0 after
    // a loss told the operator and the supervisor that all was well.
    setTimeout(() => {
      console.error(`[tollgate] stopped: the write-out did not finish ${WRITE_OUT_MS / 1000} s after the drain (a store or the telemetry exporter did not answer); cost records and budget settlements not yet written or kept are lost`);
      process.exit(1);
    }, drainMs + WRITE_OUT_MS).unref();
    gateway.close({ streamDrainMs, drainMs }).then(
      ({ lostRecords, lostSettlements }) => {
        if (lostRecords + lostSettlements === 0) {
          console.error("[tollgate] stopped: records written");
          process.exit(0);
        }
        console.error(`[tollgate] stopped: ${lostRecords} cost records and ${lostSettlements} budget settlements lost, neither written nor kept (see the errors above)`);
        process.exit(1);
      },
      (error: unknown) => {
        console.error(oneLine(`[tollgate] error while stopping: ${(error as Error)?.message ?? String(error)}`));
        process.exit(1);
      },
    );
  };
  // `on`, not `once`: with the listener gone, a second SIGTERM took Node's default and killed
  // the process in the middle of its drain.
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  // Said only once a stop is handled: a supervisor that signals as soon as it reads this line
  // would otherwise kill the process outright, without a drain.
  console.error(oneLine(`[tollgate] listening on ${gateway.url} (config ${path})`));
}

async function createKey({ id, team, admin = false }: { id?: string; team?: string; admin?: boolean }) {
  if (admin && (id !== undefined || team !== undefined)) throw new UsageError("tollgate: the admin key has no --id or --team");
  const key = generateKey();
  const hash = await hashKey(key);
  // The admin key is a key of its own: its hash goes under "admin", never under "keys".
  const where = admin ? `Put this in your config as "admin"` : `Add this to "keys" in your config`;
  const entry = admin ? { keyHash: hash } : { id: id ?? "my-app", team: team ?? "my-team", hash };
  process.stdout.write(`key:  ${key}\n` + `hash: ${hash}\n\n` + `The key is shown once; tollgate keeps only the hash. ${where}:\n` + `${JSON.stringify(entry)}\n`);
}

/** PORT as a port: blank is unset (a compose file's `PORT:` left empty), anything else must be one. */
function portFrom(setting: string | undefined): number {
  const text = setting?.trim();
  if (!text) return 8787;
  const port = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(port >= 0 && port <= 65535)) throw new Error(`PORT=${setting} is not a port: set PORT to a whole number from 1 to 65535 (0: any free port), or leave it unset for 8787`);
  return port;
}
