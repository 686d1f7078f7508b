import { z } from "zod";
import type { ChatRequest, ResponseFormat } from "../../src/model/chat-request.ts";
import { claudeDecodedSchema } from "../../src/model/claude-structured-outputs.ts";
import { findModelLimits } from "../../src/pricing/find-model-price.ts";
import type { Policy } from "../policy.ts";

// The first token commits the rest: a model that starts with "Sure! Here is" will not produce
// clean JSON. So the format instruction goes FIRST — the first line of the system prompt, which is
// created if there is none — whenever the route or the request (response_format) asks for a
// format. On Anthropic models that allow it (before Claude 4.6) the answer can also be prefilled
// with "{", and the client still gets the whole JSON object.

export const formatOptionsSchema = z
  .strictObject({
    /** `json`: every answer on this route is one JSON object (OpenAI targets also get response_format). */
    type: z.enum(["json", "text"], { error: 'write "json", or "text" with an instruction' }).default("json"),
    /** Your own first line instead of the built-in one, e.g. "Answer in Markdown with one table." */
    instruction: z.string().min(1).optional(),
    /** Anthropic targets: start the answer with "{" (JSON only). */
    prefill: z.boolean().default(false),
  })
  // A text format has no line of its own, and a "{" prefill is JSON's: either would be a policy
  // the route's author believes at work while it does nothing.
  .refine((options) => options.type !== "text" || options.instruction !== undefined, {
    error: 'type "text" needs an instruction, e.g. "Answer in Markdown with one table." (without one the format policy does nothing: remove it)',
    path: ["instruction"],
  })
  .refine((options) => options.type !== "text" || !options.prefill, {
    error: 'prefill starts the answer with "{", for type "json" only: remove prefill, or write type "json"',
    path: ["prefill"],
  });

export type FormatOptions = z.output<typeof formatOptionsSchema>;

export const JSON_INSTRUCTION = "Respond with a single JSON object and nothing else.";

/**
 * The first line for a response format. A schema is named, not spelled out: OpenAI-style targets
 * get it natively in response_format, as do Claude models with structured outputs; other Claude
 * models get it written into the line per target (`schemaInstruction`).
 */
export function formatInstruction(format: ResponseFormat): string | undefined {
  if (format.type === "text") return undefined;
  if (format.type === "json") return JSON_INSTRUCTION;
  return `Respond with a single JSON object that conforms to the JSON Schema "${format.name}"${purpose(format)}, and nothing else.`;
}

function schemaInstruction(format: Extract<ResponseFormat, { type: "json-schema" }>): string {
  return `Respond with a single JSON object that conforms to this JSON Schema${purpose(format)}, and nothing else: ${JSON.stringify(format.schema)}`;
}

/**
 * The client's description of what the answer is for, which the model reads with the schema:
 * OpenAI takes it in response_format, Claude's output_config.format has no place for it.
 */
function purpose(format: Extract<ResponseFormat, { type: "json-schema" }>): string {
  return format.description ? ` (${format.description})` : "";
}

/** The request with `line` as the first line of its system prompt. */
export function withFirstSystemLine(request: ChatRequest, line: string): ChatRequest {
  const [first, ...rest] = request.messages;
  if (first?.role === "system") {
    if (first.content === line || first.content.startsWith(`${line}\n`)) return request;
    return { ...request, messages: [{ ...first, content: `${line}\n${first.content}` }, ...rest] };
  }
  return { ...request, messages: [{ role: "system", content: line }, ...request.messages] };
}

/** Runs on every route; options come from the route's `format` policy, if it has one. */
export function formatPolicy(options?: FormatOptions): Policy {
  return {
    name: "format",
    apply(request, log) {
      let responseFormat = request.responseFormat;
      // A route that wants JSON asks for it natively too, unless the client asked for a schema (stricter).
      if (options?.type === "json" && responseFormat?.type !== "json-schema") responseFormat = { type: "json" };
      let line = options?.instruction ?? (responseFormat ? formatInstruction(responseFormat) : undefined);
      // A client's own JSON ask stays first, and the route's instruction follows: a schema, the
      // stricter ask, always (Anthropic targets get the schema itself written into its line);
      // json_object where the route's format is text (its instruction is then no JSON one, and
      // for Claude, which has no response_format, the line is all that carries the ask).
      const clientsFirst = responseFormat?.type === "json-schema" || (responseFormat?.type === "json" && options?.type === "text");
      if (clientsFirst && options?.instruction) line = `${formatInstruction(responseFormat!)}\n${options.instruction}`;
      // OpenAI refuses json_object mode unless "json" appears in the messages: a route's own
      // instruction that never says it keeps the built-in JSON line after it.
      if (responseFormat?.type === "json" && line && !/json/i.test(line) && !mentionsJson(request)) line = `${line}\n${JSON_INSTRUCTION}`;
      if (!line) return request;
      log.notes.push(`format=${responseFormat?.type ?? options?.type ?? "text"}`);
      return withFirstSystemLine({ ...request, ...(responseFormat ? { responseFormat } : {}) }, line);
    },
    adaptToTarget(request, target, log) {
      if (target.providerType !== "anthropic") return request;
      const format = request.responseFormat;
      // Claude decodes the answer to the schema itself (output_config.format): the named line is
      // enough, as for OpenAI, and a prefilled answer is refused with structured outputs.
      if (claudeDecodedSchema(format, target.model)) {
        log.notes.push("format=native");
        return request;
      }
      if (format?.type === "json-schema") {
        const named = formatInstruction(format)!;
        const first = request.messages[0];
        if (first?.role === "system" && first.content.startsWith(named)) {
          request = { ...request, messages: [{ ...first, content: schemaInstruction(format) + first.content.slice(named.length) }, ...request.messages.slice(1)] };
        }
      }
      if (!options?.prefill) return request;
      if (request.responseFormat?.type !== "json" && request.responseFormat?.type !== "json-schema") return request;
      // Prefill cannot follow a trailing assistant turn (the client's own prefill) or go with tools.
      if (request.messages.at(-1)?.role === "assistant" || request.tools?.length) return request;
      if (request.thinking && request.thinking.type !== "disabled") {
        // Claude takes no prefilled answer while it thinks: its answer starts with the thinking.
        log.notes.push("format=prefill-unsupported");
        log.warnings.push(`${target.model} does not accept a prefilled answer while it thinks; sent with the format instruction only`);
        return request;
      }
      const limits = findModelLimits("anthropic", target.model);
      if (limits.noPrefill) {
        // Claude 4.6 and later refuse a prefilled turn with a 400: the first line has to do alone.
        log.notes.push("format=prefill-unsupported");
        log.warnings.push(`${target.model} does not accept a prefilled answer; sent with the format instruction only`);
        return request;
      }
      if (limits.maxOutputTokens === undefined && !CLAUDE_3_OR_OLDER.test(target.model)) {
        // A model the list does not know is most likely newer than it, and every Claude since 4.6
        // refuses prefill: a 400 on every request would cost more than the "{" saves. (Claude 3
        // models, older than the list, take it.)
        log.notes.push("format=prefill-unknown-model");
        log.warnings.push(`${target.model} is not in tollgate's model list, and newer Claude models refuse a prefilled answer; sent with the format instruction only`);
        return request;
      }
      log.notes.push("format=prefill");
      return { ...request, prefill: "{" };
    },
  };
}

const CLAUDE_3_OR_OLDER = /^claude-(3|2|instant)/;

function mentionsJson(request: ChatRequest): boolean {
  return request.messages.some((message) =>
    message.role === "system" || message.role === "tool"
      ? /json/i.test(message.content)
      : message.content.some((part) => part.type === "text" && /json/i.test(part.text)),
  );
}
