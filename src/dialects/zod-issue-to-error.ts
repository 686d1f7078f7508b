import type { z } from "zod";
import { GatewayError } from "../errors/gateway-error.ts";
import { formatPath, issueMessage } from "../config/format-config-issues.ts";

/** A 400 that names the first bad field, in the form clients write it: `messages[1].content`. */
export function zodIssueToError(issues: readonly z.core.$ZodIssue[]): GatewayError {
  const issue = issues[0] && furthest(issues[0]);
  if (!issue) return new GatewayError("invalid_request", "invalid request body");
  if (issue.code === "unrecognized_keys") {
    // Both providers refuse a field they do not know; passed over, it would change nothing with a 200.
    const [first = "", ...others] = issue.keys;
    const param = formatPath([...issue.path, first]);
    const also = others.length > 0 ? ` (nor ${others.map((key) => formatPath([...issue.path, key])).join(", ")})` : "";
    return new GatewayError("invalid_request", `${param}: tollgate does not carry this field${also}; remove it`, { param });
  }
  const param = formatPath(issue.path);
  return new GatewayError("invalid_request", `${param}: ${issueMessage(issue)}`, { param });
}

/**
 * Of a union's failed forms, the one that got furthest into the value says what is wrong: an
 * array of content blocks with one block missing a field is that field's error, not "write a
 * string or an array of content blocks". When no form got into the value, the union's own
 * message stands.
 */
function furthest(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== "invalid_union" || issue.errors.length === 0) return issue;
  let best: z.core.$ZodIssue | undefined;
  for (const branch of issue.errors) {
    const first = branch[0];
    if (first && first.path.length > (best?.path.length ?? 0)) best = first;
  }
  return best ? furthest({ ...best, path: [...issue.path, ...best.path] }) : issue;
}
