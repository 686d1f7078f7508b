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

/** What to write, for each JSON type zod may expect. */
const WRITE: Record<string, string> = {
  array: "an array",
  object: "a JSON object",
  string: "a string",
  number: "a number",
  int: "a whole number",
  boolean: "true or false",
  null: "null",
};

/**
 * An issue's message in the form the rest of tollgate's errors take: what to write. A schema's
 * own messages say that already; zod's default for a wrong type ("Invalid input: expected array,
 * received undefined") is reworded, and a missing field says it is required.
 */
export function issueMessage(issue: z.core.$ZodIssue): string {
  if (issue.code !== "invalid_type" || !issue.message.startsWith("Invalid input: expected ")) return issue.message;
  const write = WRITE[issue.expected] ?? issue.expected;
  const received = /received (\w+)/.exec(issue.message)?.[1];
  if (received === "undefined") return `required: write ${write}`;
  return `write ${write}${received ? `, not ${WRITE[received] ?? received}` : ""}`;
}

export function formatConfigIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.map((issue) => {
    if (issue.code === "unrecognized_keys") {
      return `${formatPath(issue.path)}: unknown field ${issue.keys.map((k) => `"${k}"`).join(", ")}; check the spelling against config/tollgate.schema.json`;
    }
    return `${formatPath(issue.path)}: ${issueMessage(issue)}`;
  });
}
