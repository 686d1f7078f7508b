import { transformJSONSchema } from "@anthropic-ai/sdk/lib/transform-json-schema";
import { findModelLimits } from "../pricing/find-model-price.ts";
import type { ResponseFormat, ToolDefinition } from "./chat-request.ts";
import { claudeDecodesAsMeant } from "./json-schema-nodes.ts";

// Claude's structured outputs decode the answer to a JSON Schema (`output_config.format`) and a
// strict tool's input to its schema, where the model has them (bundled-prices.ts). Only a schema
// Claude decodes to as the client meant it goes natively (every object closed, as OpenAI's strict
// schemas and the Anthropic SDK's zodOutputFormat() write them: claudeDecodesAsMeant); any other
// is asked for in the system prompt's first line, as for models without structured outputs.
// Claude takes fewer keywords than OpenAI's strict mode (no string lengths, patterns or number
// bounds): the Anthropic SDK's own transformJSONSchema moves those into the description, as its
// parse() helpers do, so that a schema written for OpenAI is not refused with a 400.

export function claudeTakesStructuredOutputs(model: string): boolean {
  return findModelLimits("anthropic", model).structuredOutputs === true;
}

/** The schema to send as `output_config.format`, or undefined where the format goes in the prompt. */
export function claudeDecodedSchema(format: ResponseFormat | undefined, model: string): Record<string, unknown> | undefined {
  if (format?.type !== "json-schema" || !claudeTakesStructuredOutputs(model)) return undefined;
  return claudeSchema(format.schema);
}

/** A strict tool as Claude takes it: its schema within Claude's keywords, or not strict where it cannot be. */
export function claudeStrictTool(tool: ToolDefinition, model: string): { strict?: boolean; parameters: Record<string, unknown> } {
  if (tool.strict === undefined || !claudeTakesStructuredOutputs(model)) return { parameters: tool.parameters };
  if (!tool.strict) return { strict: false, parameters: tool.parameters };
  const schema = claudeSchema({ type: "object", ...tool.parameters });
  return schema ? { strict: true, parameters: schema } : { parameters: tool.parameters };
}

function claudeSchema(schema: Record<string, unknown>): Record<string, unknown> | undefined {
  if (!claudeDecodesAsMeant(schema)) return undefined;
  try {
    return transformJSONSchema(schema) as Record<string, unknown>;
  } catch {
    // "JSON schema must have a type defined…": one Claude cannot decode to.
    return undefined;
  }
}
