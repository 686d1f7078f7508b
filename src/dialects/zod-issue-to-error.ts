import type { z } from "zod";
import { GatewayError } from "../errors/gateway-error.ts";
import { formatPath } from "../config/format-config-issues.ts";

/** A 400 that names the first bad field, in the form clients write it: `messages[1].content`. */
export function zodIssueToError(issues: readonly z.core.$ZodIssue[]): GatewayError {
  const issue = issues[0];
  if (!issue) return new GatewayError("invalid_request", "invalid request body");
  if (issue.code === "unrecognized_keys") {
    const param = formatPath([...issue.path, issue.keys[0] ?? ""]);
    return new GatewayError("invalid_request", `${param}: unknown field; remove it`, { param });
  }
  const param = formatPath(issue.path);
  return new GatewayError("invalid_request", `${param}: ${issue.message}`, { param });
}
