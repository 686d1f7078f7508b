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

/** How a wrong value is named after "not": its JSON type, or itself for true, false and null. */
function describeValue(value: unknown): string {
  if (value === null || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return WRITE.array!;
  return WRITE[typeof value] ?? typeof value;
}

/**
 * A schema's error for a field whose type is checked: "required: …" only when the field is
 * missing. One text for both called `"id": 5` missing ("keys[0].id: required: …") though it is there.
 */
export function requiredAs(type: keyof typeof WRITE, what: string) {
  return (issue: { code?: string; input?: unknown; expected?: string }): string | undefined => {
    if (issue.code !== "invalid_type") return undefined;
    if (issue.input === undefined) return `required: ${what}`;
    // A number's `.int()` fails as a type too (expected "int"): 1.5 is a number, not a whole one.
    if (issue.expected === "int" && typeof issue.input === "number") return `write ${WRITE.int}, not a fraction: ${what}`;
    return `write ${WRITE[type]}, not ${describeValue(issue.input)}: ${what}`;
  };
}

/**
 * An issue's message in the form the rest of tollgate's errors take: what to write. A schema's
 * own messages say that already; zod's defaults for a wrong type ("Invalid input: expected array,
 * received undefined") and for a bound ("Too small: expected number to be >0") are reworded, and a
 * missing field says it is required.
 */
export function issueMessage(issue: z.core.$ZodIssue): string {
  if (issue.code === "too_small" && issue.message.startsWith("Too small: ")) return boundMessage(issue, issue.minimum, "above", "at least") ?? issue.message;
  if (issue.code === "too_big" && issue.message.startsWith("Too big: ")) return boundMessage(issue, issue.maximum, "below", "at most") ?? issue.message;
  if (issue.code !== "invalid_type" || !issue.message.startsWith("Invalid input: expected ")) return issue.message;
  const write = WRITE[issue.expected] ?? issue.expected;
  const received = /received (\w+)/.exec(issue.message)?.[1];
  if (received === "undefined") return `required: write ${write}`;
  // zod reports 1.5 for an int as "expected int, received number": to the reader, both are numbers.
  if (issue.expected === "int" && received === "number") return `write ${write}, not a fraction`;
  return `write ${write}${received ? `, not ${WRITE[received] ?? received}` : ""}`;
}

/** "write a number above 0", "write a number of at most 10", "write an array of at least 1 item"; undefined for bounds of other kinds. */
function boundMessage(
  issue: { origin: string; inclusive?: boolean; exact?: boolean },
  bound: number | bigint,
  exclusive: string,
  inclusive: string,
): string | undefined {
  if (issue.exact) return undefined;
  const limit = `${issue.inclusive ? inclusive : exclusive} ${bound}`;
  if (issue.origin === "number") return `write a number ${issue.inclusive ? "of " : ""}${limit}`;
  const count = (unit: string) => `${limit} ${unit}${bound === 1 || bound === 1n ? "" : "s"}`;
  if (issue.origin === "array") return `write an array of ${count("item")}`;
  if (issue.origin === "string") return `write a string of ${count("character")}`;
  return undefined;
}

export function formatConfigIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.map((issue) => {
    if (issue.code === "unrecognized_keys") {
      return `${formatPath(issue.path)}: unknown field ${issue.keys.map((k) => `"${k}"`).join(", ")}; check the spelling against config/tollgate.schema.json`;
    }
    return `${formatPath(issue.path)}: ${issueMessage(issue)}`;
  });
}
