import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const EXAMPLE_CONFIG_PATH = fileURLToPath(new URL("../../config/example.json", import.meta.url));

/** `--config FILE`, else TOLLGATE_CONFIG, else the bundled example config. */
export function chooseConfigPath(configFlag: string | undefined, env: Record<string, string | undefined>): string {
  if (configFlag !== undefined) {
    if (!configFlag) throw new Error("--config needs a file path: tollgate --config ./tollgate.json");
    return configFlag;
  }
  return env.TOLLGATE_CONFIG || EXAMPLE_CONFIG_PATH;
}

export function readConfigFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "no such file" : code === "EACCES" ? "permission denied" : code === "EISDIR" ? "it is a directory" : (code ?? (error as Error).message);
    throw new Error(`cannot read config file ${resolve(path)}: ${why}; check --config or TOLLGATE_CONFIG`);
  }
  try {
    // A byte order mark (PowerShell 5's `Out-File -Encoding utf8`) is no part of the JSON; Node's
    // require() of a .json file drops it too.
    return JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch (error) {
    throw new Error(`config file ${path} is not valid JSON: ${(error as Error).message}`);
  }
}
