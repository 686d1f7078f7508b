import type { z } from "zod";

/** `routes.gpt.targets[0].provider` from zod's `["routes","gpt","targets",0,"provider"]`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else out += out ? `.${String(segment)}` : String(segment);
  }
  return out || "(top level)";
}

export function formatConfigIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.map((issue) => {
    if (issue.code === "unrecognized_keys") {
      return `${formatPath(issue.path)}: unknown field ${issue.keys.map((k) => `"${k}"`).join(", ")}; check the spelling against config/tollgate.schema.json`;
    }
    return `${formatPath(issue.path)}: ${issue.message}`;
  });
}
