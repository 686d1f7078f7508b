import { z } from "zod";
import { findModelLimits } from "../../src/pricing/find-model-price.ts";
import type { Policy } from "../policy.ts";

// A stop sequence ends generation the moment it appears: "\n\nUser:" stops a model from writing
// the next turn of the dialogue itself. The route's sequences are added to the client's, without
// duplicates, and trimmed to what the target takes (OpenAI: 4; o-series: none), with a warning
// in the record instead of the provider's 400.

/** OpenAI's limit on stop sequences (REFERENCE.md). */
const OPENAI_MAX_STOP_SEQUENCES = 4;

export const stopOptionsSchema = z.strictObject({
  sequences: z.array(z.string().min(1, { error: "a stop sequence cannot be empty" })).min(1),
});

export type StopOptions = z.output<typeof stopOptionsSchema>;

export function stopPolicy(options?: StopOptions): Policy {
  return {
    name: "stop",
    apply(request, log) {
      if (!options) return request;
      const client = request.stop ?? [];
      // The client's own sequences first: if a target takes only a few, those are what it asked for.
      const merged = [...new Set([...client, ...options.sequences])];
      if (merged.length === client.length) return request;
      log.notes.push(`stop=merged:${merged.length - client.length}`);
      return { ...request, stop: merged };
    },
    adaptToTarget(request, target, log) {
      // OpenAI takes at most 4 on every model that takes any; a model the price list does not know
      // is held to that too, rather than sent a list OpenAI answers with a 400.
      const limit = findModelLimits(target.providerType, target.model).maxStopSequences ?? (target.providerType === "openai" ? OPENAI_MAX_STOP_SEQUENCES : undefined);
      if (limit === undefined || !request.stop || request.stop.length <= limit) return request;
      const kept = request.stop.slice(0, limit);
      const dropped = request.stop.slice(limit);
      log.notes.push(`stop=trimmed:${request.stop.length}->${limit}`);
      log.warnings.push(`${target.model} takes at most ${limit} stop sequences; not sent: ${dropped.map((text) => JSON.stringify(text)).join(", ")}`);
      return { ...request, ...(kept.length > 0 ? { stop: kept } : { stop: undefined }) };
    },
  };
}
