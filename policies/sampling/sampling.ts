import { z } from "zod";
import { GatewayError } from "../../src/errors/gateway-error.ts";
import type { ChatRequest } from "../../src/model/chat-request.ts";
import { claudeStrictDrops } from "../../src/model/claude-structured-outputs.ts";
import { findModelLimits } from "../../src/pricing/find-model-price.ts";
import type { Policy, PolicyTarget } from "../policy.ts";
import { claudeUserId } from "./claude-user-id.ts";

// Decoding parameters shape the sample step, and providers differ in which they take: OpenAI has
// no top_k or min_p, the o-series and the newest Claude models accept only default sampling,
// Claude Opus 4.1 and 4.5+ refuse temperature and top_p together.
// A route sets defaults and allowed ranges; a parameter the target does not take is dropped with
// a warning in the record (or, when the route says so, rejected) instead of becoming a
// provider 400 that the client cannot read. The same goes for the provider-specific options that
// shape how an answer is produced (Claude's thinking, effort and context editing; OpenAI's
// reasoning effort, verbosity and predictions); log probabilities, which the client reads, are
// never dropped: a target without them refuses the request.

/** A parameter's default and allowed range, each within what any provider takes for it. */
const range = (lowest: number, highest: number, example: string) => {
  const value = z
    .number()
    .min(lowest, { error: `at least ${lowest}; for example ${example}` })
    .max(highest, { error: `at most ${highest}, the highest any provider takes; for example ${example}` });
  return z
    .strictObject({ default: value.optional(), min: value.optional(), max: value.optional() })
    .refine((bounds) => bounds.min === undefined || bounds.max === undefined || bounds.min <= bounds.max, {
      error: "min is above max: write min ≤ max",
      path: ["min"],
    });
};

export const samplingOptionsSchema = z.strictObject({
  // OpenAI takes temperature up to 2 (Anthropic up to 1; adaptToTarget scales it there).
  temperature: range(0, 2, "0.7").optional(),
  topP: range(0, 1, "0.9").optional(),
  topK: range(0, Number.MAX_SAFE_INTEGER, "40").optional(),
  seed: z.strictObject({ default: z.number().int() }).optional(),
  /**
   * A parameter the target does not take: `drop` it with a warning, or `reject` the request (400,
   * from the first target the route calls: its fallbacks are not a way around the rule).
   */
  onUnsupported: z.enum(["drop", "reject"], { error: 'write "drop" or "reject"' }).default("drop"),
});

export type SamplingOptions = z.output<typeof samplingOptionsSchema>;

type Parameter =
  | "temperature"
  | "topP"
  | "topK"
  | "minP"
  | "frequencyPenalty"
  | "presencePenalty"
  | "logitBias"
  | "thinking"
  | "effort"
  | "reasoningEffort"
  | "verbosity"
  | "prediction"
  | "parallelToolCalls"
  | "seed"
  | "contextManagement";
const WIRE_NAMES: Record<Parameter, string> = {
  contextManagement: "context_management",
  prediction: "prediction",
  parallelToolCalls: "parallel_tool_calls",
  seed: "seed",
  verbosity: "verbosity",
  thinking: "thinking",
  effort: "output_config.effort",
  reasoningEffort: "reasoning_effort",
  temperature: "temperature",
  topP: "top_p",
  topK: "top_k",
  minP: "min_p",
  frequencyPenalty: "frequency_penalty",
  presencePenalty: "presence_penalty",
  logitBias: "logit_bias",
};

export function samplingPolicy(options?: SamplingOptions): Policy {
  return {
    name: "sampling",
    apply(request, log) {
      let next = request;
      for (const parameter of ["temperature", "topP", "topK"] as const) {
        const bounds = options?.[parameter];
        if (!bounds) continue;
        let value = next[parameter];
        if (value === undefined && bounds.default !== undefined) {
          value = bounds.default;
          log.notes.push(`${WIRE_NAMES[parameter]}=default:${value}`);
        }
        if (value === undefined) continue;
        const clamped = Math.min(Math.max(value, bounds.min ?? -Infinity), bounds.max ?? Infinity);
        if (clamped !== value) log.notes.push(`${WIRE_NAMES[parameter]}=clamped:${value}->${clamped}`);
        if (clamped !== next[parameter]) next = { ...next, [parameter]: clamped };
      }
      if (next.seed === undefined && options?.seed) {
        log.notes.push(`seed=default:${options.seed.default}`);
        next = { ...next, seed: options.seed.default };
      }
      return next;
    },
    adaptToTarget(request, target, log) {
      refuseLogprobs(request, target);
      refuseUsOnlyInference(request, target);
      let next = request;
      // A field the target does not take: the request refused (400), or a note and a warning.
      const refuseOrNote = (wire: string, value: unknown, why: string) => {
        if (options?.onUnsupported === "reject") {
          throw new GatewayError("invalid_request", `${wire} is not accepted by ${target.model} (${target.providerName})${why}: remove ${wire}`, {
            param: wire,
            code: "unsupported_parameter",
            routeRule: true,
          });
        }
        log.notes.push(`${wire}=dropped`);
        log.warnings.push(`${wire} ${JSON.stringify(value)} was not sent: ${target.model} does not accept it${why}`);
      };
      const drop = (parameter: Parameter, why: string) => {
        refuseOrNote(WIRE_NAMES[parameter], next[parameter], why);
        next = { ...next, [parameter]: undefined };
      };
      for (const parameter of unsupported(request, target)) drop(parameter, "");
      // Anthropic's temperature range is 0–1, OpenAI's 0–2: the same intent at the top of the
      // scale. After the drops: a temperature the model does not take is dropped as it was sent.
      if (target.providerType === "anthropic" && next.temperature !== undefined && next.temperature > 1) {
        log.notes.push(`temperature=clamped:${next.temperature}->1`);
        next = { ...next, temperature: 1 };
      }
      // While Claude thinks it samples its own way: temperature only 1, no top_k, top_p of at
      // least 0.95. A route's default (or a client's value) would turn the request into a 400.
      if (target.providerType === "anthropic" && next.thinking && next.thinking.type !== "disabled") {
        if (next.temperature !== undefined && next.temperature !== 1) drop("temperature", " while it thinks");
        if (next.topK !== undefined) drop("topK", " while it thinks");
        if (next.topP !== undefined && next.topP < 0.95) drop("topP", " below 0.95 while it thinks");
      }
      // Anthropic's thinking is Claude's alone. Asking for none ("disabled") needs no warning.
      if (next.thinking && target.providerType !== "anthropic") {
        if (next.thinking.type === "disabled") next = { ...next, thinking: undefined };
        else drop("thinking", " (Anthropic's extended thinking)");
      }
      if (next.effort !== undefined && target.providerType !== "anthropic") drop("effort", " (Anthropic's effort)");
      // A strict tool Claude cannot take strict goes without it (the adapter sends it so): the
      // client counted on inputs decoded to the schema, and should hear they are not.
      if (target.providerType === "anthropic" && next.tools) {
        for (const { tools, why } of claudeStrictDrops(next.tools, target.model)) {
          refuseOrNote("strict", true, ` (${tools.length > 1 ? "tools" : "tool"} ${tools.map((name) => `"${name}"`).join(", ")}: ${why})`);
        }
      }
      // Claude's messages have no participant names: the conversation goes without them.
      if (target.providerType === "anthropic" && next.messages.some((message) => message.role !== "tool" && message.name)) {
        const named = next.messages.findIndex((message) => message.role !== "tool" && message.name);
        if (options?.onUnsupported === "reject") {
          throw new GatewayError("invalid_request", `messages[${named}].name is not accepted by ${target.model} (${target.providerName}): Claude's messages have no participant names; remove name`, {
            param: `messages[${named}].name`,
            code: "unsupported_parameter",
            routeRule: true,
          });
        }
        log.notes.push("name=dropped");
        log.warnings.push(`the messages' participant names were not sent: ${target.model} takes none`);
        next = { ...next, messages: next.messages.map((message) => (message.role !== "tool" && message.name ? withoutName(message) : message)) };
      }
      // vLLM's and SGLang's own options: the clouds have no such thing.
      if (next.decoderOptions && target.providerType !== "openai-compatible") {
        for (const [wire, value] of Object.entries(next.decoderOptions)) refuseOrNote(wire, value, " (a local decoder's option)");
        next = { ...next, decoderOptions: undefined };
      }
      // Context editing trims the conversation at Anthropic; another provider reads it whole.
      if (next.contextManagement !== undefined && target.providerType !== "anthropic") drop("contextManagement", " (Anthropic's context editing)");
      // Claude Opus 4.1 and 4.5+ take temperature or top_p, not both. top_p is the one that goes:
      // temperature is what a client usually means to set (many SDK wrappers send top_p 1 as a
      // default), and a route's temperature default is the route's explicit wish.
      if (next.temperature !== undefined && next.topP !== undefined && findModelLimits(target.providerType, target.model).noTemperatureWithTopP) {
        drop("topP", " together with temperature");
      }
      // Not a parameter to drop: the end-user id goes, hashed where Claude would refuse it.
      return claudeUserId(next, target, log);
    },
  };
}

/**
 * Log probabilities cannot be dropped like a sampling parameter: the client reads them, and an
 * answer without them breaks it. Claude gives none, nor do OpenAI's reasoning models (a 400
 * there): the target refuses the request, so the route moves on to one that gives them.
 */
function refuseLogprobs(request: ChatRequest, target: PolicyTarget): void {
  if (!request.logprobs) return;
  const model = target.providerType === "anthropic" ? `${target.model} (Claude)` : findModelLimits(target.providerType, target.model).reasoning === true ? `${target.model} (a reasoning model)` : undefined;
  if (model === undefined) return;
  throw new GatewayError("invalid_request", `logprobs: ${model} gives no log probabilities: remove logprobs, or route this request to a model that gives them`, { param: "logprobs" });
}

/**
 * A request that asks for inference kept in the US (Anthropic's `inference_geo: "us"`, a data
 * residency rule) cannot go where that is not honoured: only Anthropic takes the field, so other
 * targets refuse it and the route moves on ("global" asks for nothing and goes without).
 */
function refuseUsOnlyInference(request: ChatRequest, target: PolicyTarget): void {
  if (request.inferenceGeo !== "us" || target.providerType === "anthropic") return;
  throw new GatewayError("invalid_request", `inference_geo: ${target.model} (${target.providerName}) cannot be asked to keep inference in the US: remove inference_geo, or route this request to a Claude model`, {
    param: "inference_geo",
  });
}

function withoutName<T extends { name?: string }>(message: T): T {
  const { name: _name, ...rest } = message;
  return rest as T;
}

/** The parameters set on the request that this target would refuse. */
function unsupported(request: ChatRequest, target: PolicyTarget): Parameter[] {
  const found: Parameter[] = [];
  const limits = findModelLimits(target.providerType, target.model);
  const fixed = limits.fixedSampling === true;
  // o-series and the newest Claude models: defaults only (temperature 1; Claude top_p ≥ 0.99,
  // the o-series no top_p at all).
  if (fixed && request.temperature !== undefined && request.temperature !== 1) found.push("temperature");
  if (fixed && request.topP !== undefined && (request.topP < 0.99 || limits.reasoning === true)) found.push("topP");
  // OpenAI's reasoning models refuse the penalties and logit_bias; its chat models refuse
  // reasoning_effort (a route falling back from o3 to gpt-4o would fail on it).
  if (limits.reasoning === true) {
    for (const parameter of ["frequencyPenalty", "presencePenalty", "logitBias"] as const) if (request[parameter] !== undefined) found.push(parameter);
  }
  if (limits.reasoning === false && request.reasoningEffort !== undefined) found.push("reasoningEffort");
  // Predicted Outputs: OpenAI's chat models only (the reasoning models refuse it). It only speeds
  // the answer up, so it can go.
  if (request.prediction !== undefined && limits.reasoning === true) found.push("prediction");
  // The o-series refuses parallel_tool_calls, false too ("Unsupported parameter"); an Anthropic
  // client's disable_parallel_tool_use arrives as false.
  if (request.parallelToolCalls !== undefined && limits.noParallelToolCalls === true) found.push("parallelToolCalls");
  // gpt-5's verbosity: the models before it refuse the field, and no other provider has one.
  if (request.verbosity !== undefined && (target.providerType !== "openai" || limits.noVerbosity === true)) found.push("verbosity");
  if (request.topK !== undefined && (target.providerType === "openai" || fixed)) found.push("topK");
  if (request.minP !== undefined && target.providerType !== "openai-compatible") found.push("minP");
  // Anthropic has no penalties and no logit bias (and its token ids are not OpenAI's). Nor does
  // it take reasoning_effort: its own OpenAI compatibility layer ignores the field, and a Claude
  // that should think is asked with `thinking` (an Anthropic client's), which has a budget.
  if (target.providerType === "anthropic") {
    for (const parameter of ["frequencyPenalty", "presencePenalty", "logitBias", "reasoningEffort"] as const) if (request[parameter] !== undefined) found.push(parameter);
    // Nor a seed: the adapter never sent it, and the record said nothing of it.
    if (request.seed !== undefined) found.push("seed");
  }
  return found;
}
