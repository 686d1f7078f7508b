import { findModelLimits } from "../pricing/find-model-price.ts";
import type { ResponseFormat } from "./chat-request.ts";

// Claude's structured outputs decode the answer to a JSON Schema (`output_config.format`) and a
// strict tool's input to its schema, where the model has them (bundled-prices.ts). The schema
// must be one Claude takes: objects closed with `additionalProperties: false`, as OpenAI's strict
// schemas and the Anthropic SDK's zodOutputFormat() write them. Any other schema is asked for in
// the system prompt's first line instead, as for models without structured outputs: sent
// natively, Claude would refuse it with a 400 where the line at least gets an answer.

export function claudeTakesStructuredOutputs(model: string): boolean {
  return findModelLimits("anthropic", model).structuredOutputs === true;
}

/** The schema to send as `output_config.format`, or undefined where the format goes in the prompt. */
export function claudeDecodedSchema(format: ResponseFormat | undefined, model: string): Record<string, unknown> | undefined {
  if (format?.type !== "json-schema" || !claudeTakesStructuredOutputs(model)) return undefined;
  return format.strict === true || format.schema.additionalProperties === false ? format.schema : undefined;
}
