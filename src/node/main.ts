import { z } from "zod";
import { generateKey, hashKey } from "../auth/key-hash.ts";
import { configSchema } from "../config/config-schema.ts";
import { ConfigError } from "../config/resolve-config.ts";
import { chooseConfigPath, EXAMPLE_CONFIG_PATH, readConfigFile } from "./load-config-file.ts";
import { startGateway } from "./serve.ts";

// The `tollgate` command:
//   tollgate [start] [--config FILE]        serve (PORT, default 8787)
//   tollgate keys create [--id ID] [--team TEAM]
//   tollgate schema                         print the config's JSON Schema
//   tollgate help | --help | -h             print this

const USAGE = `usage:
  tollgate [start] [--config FILE]          serve (port from PORT, default 8787; config also from TOLLGATE_CONFIG)
  tollgate keys create [--id ID] [--team TEAM]   print a new virtual key once, and the hash for the config
  tollgate schema                           print the config's JSON Schema
`;

const argv = process.argv.slice(2);
const wantsHelp = argv.includes("--help") || argv.includes("-h") || argv[0] === "help";
const command = wantsHelp ? "help" : argv[0] && !argv[0].startsWith("-") ? argv[0] : "start";

try {
  if (command === "help") process.stdout.write(USAGE);
  else if (command === "start") await start();
  else if (command === "keys" && argv[1] === "create") await createKey();
  else if (command === "schema") process.stdout.write(JSON.stringify(z.toJSONSchema(configSchema, { io: "input" }), null, 2) + "\n");
  else {
    console.error(`unknown command "${argv.join(" ")}"\n${USAGE}`);
    process.exitCode = 2;
  }
} catch (error) {
  console.error(error instanceof ConfigError || error instanceof Error ? error.message : error);
  process.exitCode = 1;
}

async function start() {
  const path = chooseConfigPath(argv, process.env);
  const port = Number(process.env.PORT ?? 8787);
  const host = process.env.HOST ?? "0.0.0.0";
  const gateway = await startGateway({ config: readConfigFile(path), port, host });
  if (path === EXAMPLE_CONFIG_PATH) {
    console.error("[tollgate] using the bundled example config; it accepts the demo key `tollgate-dev-key`. Do not expose it.");
  }
  console.error(`[tollgate] listening on ${gateway.url} (config ${path})`);
  // Finish in-flight answers, but do not let a long stream hold a restart for more than 8 s: it
  // is then cut (and recorded as aborted), and the ledger and telemetry are written out. The
  // exit at 20 s is for an exporter or store that does not answer.
  const stop = () => {
    setTimeout(() => process.exit(0), 20_000).unref();
    gateway.close({ drainMs: 8_000 }).then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(`[tollgate] error while stopping: ${(error as Error)?.message ?? String(error)}`);
        process.exit(1);
      },
    );
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

async function createKey() {
  const option = (name: string) => {
    const at = argv.indexOf(name);
    return at === -1 ? undefined : argv[at + 1];
  };
  const key = generateKey();
  const hash = await hashKey(key);
  const entry = { id: option("--id") ?? "my-app", team: option("--team") ?? "my-team", hash };
  process.stdout.write(
    `key:  ${key}\n` +
      `hash: ${hash}\n\n` +
      `The key is shown once; tollgate keeps only the hash. Add this to "keys" in your config:\n` +
      `${JSON.stringify(entry)}\n`,
  );
}
