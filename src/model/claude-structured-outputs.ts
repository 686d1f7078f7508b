import { transformJSONSchema } from "@anthropic-ai/sdk/lib/transform-json-schema";
import { findModelLimits } from "../pricing/find-model-price.ts";
import type { ResponseFormat, ToolDefinition } from "./chat-request.ts";
import { claudeDecodesAsMeant, optionalPropertiesOf, propertiesOf, schemaNodes } from "./json-schema-nodes.ts";

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

/**
 * Each client schema as Claude takes it (null: it goes in the prompt), worked out once per
 * request: the format policy asks whether it goes natively, the adapter sends it.
 */
const decodedSchemas = new WeakMap<object, Record<string, unknown> | null>();

/** The schema to send as `output_config.format`, or undefined where the format goes in the prompt. */
export function claudeDecodedSchema(format: ResponseFormat | undefined, model: string): Record<string, unknown> | undefined {
  if (format?.type !== "json-schema" || !claudeTakesStructuredOutputs(model)) return undefined;
  let decoded = decodedSchemas.get(format.schema);
  if (decoded === undefined) decodedSchemas.set(format.schema, (decoded = claudeSchema(format.schema) ?? null));
  return decoded ?? undefined;
}

/**
 * Anthropic's limits on the strict tools of one request, past which it refuses the whole request
 * with a 400 (platform.claude.com/docs/en/agents-and-tools/tool-use/strict-tool-use; hit by agent
 * frameworks that mark every tool strict: camel-ai/camel#4171, elizaOS/eliza#16499).
 */
const STRICT_TOOL_LIMITS = { tools: 20, optionalParameters: 24, unionParameters: 16 };

/**
 * The tools as Claude takes them: each strict one within Claude's keywords, unless the request's
 * strict tools together pass Anthropic's limits; then none is strict, and the request is
 * answered without the guarantee instead of refused.
 */
export function claudeTools(tools: readonly ToolDefinition[], model: string): { strict?: boolean; parameters: Record<string, unknown> }[] {
  const shaped = tools.map((tool) => claudeStrictTool(tool, model));
  const strict = shaped.filter((tool) => tool.strict === true);
  if (strict.length === 0) return shaped;
  let optional = 0;
  let unions = 0;
  for (const tool of strict) {
    for (const node of schemaNodes(tool.parameters)) {
      optional += optionalPropertiesOf(node).length;
      unions += propertiesOf(node).filter(([, property]) => {
        const schema = property as { anyOf?: unknown; type?: unknown } | null;
        return Array.isArray(schema?.anyOf) || Array.isArray(schema?.type);
      }).length;
    }
  }
  const within = strict.length <= STRICT_TOOL_LIMITS.tools && optional <= STRICT_TOOL_LIMITS.optionalParameters && unions <= STRICT_TOOL_LIMITS.unionParameters;
  return within ? shaped : tools.map((tool) => ({ parameters: tool.parameters }));
}

/**
 * The tools the client sent strict that reach Claude without it, by why: Claude refuses `strict`
 * on a model without structured outputs, on a schema it cannot decode to as written, and past its
 * limits; the tool then goes without the guarantee, which the client should hear of.
 */
export function claudeStrictDrops(tools: readonly ToolDefinition[], model: string): { tools: string[]; why: string }[] {
  const asked = tools.filter((tool) => tool.strict === true);
  if (asked.length === 0) return [];
  if (!claudeTakesStructuredOutputs(model)) return [{ tools: asked.map((tool) => tool.name), why: `${model} has no structured outputs` }];
  const shaped = claudeTools(tools, model);
  const byWhy = new Map<string, string[]>();
  tools.forEach((tool, index) => {
    if (tool.strict !== true || shaped[index]!.strict === true) return;
    const why =
      claudeStrictTool(tool, model).strict === true
        ? `the request's strict tools pass Anthropic's limits (${STRICT_TOOL_LIMITS.tools} tools, ${STRICT_TOOL_LIMITS.optionalParameters} optional or ${STRICT_TOOL_LIMITS.unionParameters} union-typed parameters)`
        : "Claude's strict mode decodes only a schema whose every object is closed (additionalProperties: false), with no tuples or draft-07 definitions";
    byWhy.set(why, [...(byWhy.get(why) ?? []), tool.name]);
  });
  return [...byWhy].map(([why, names]) => ({ tools: names, why }));
}

/** A strict tool as Claude takes it: its schema within Claude's keywords, or not strict where it cannot be. */
function claudeStrictTool(tool: ToolDefinition, model: string): { strict?: boolean; parameters: Record<string, unknown> } {
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
