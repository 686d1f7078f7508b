import { z } from "zod";
import { findModelLimits } from "../../src/pricing/find-model-price.ts";
import type { Policy } from "../policy.ts";

// A stop sequence ends generation the moment it appears: "\n\nUser:" stops a model from writing
// the next turn of the dialogue itself. The route's sequences are added to the client's, without
// duplicates, and trimmed to what the target takes (OpenAI: 4; o-series: none; none empty; Anthropic:
// none of whitespace alone), with a warning in the record instead of the provider's 400.

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
      // The client's own sequences first: if a target takes only a few, those are what it asked for.
      const client = new Set(request.stop ?? []);
      const added = [...new Set(options.sequences)].filter((sequence) => !client.has(sequence));
      if (added.length === 0) return request;
      log.notes.push(`stop=merged:${added.length}`);
      return { ...request, stop: [...client, ...added] };
    },
    adaptToTarget(request, target, log) {
      if (!request.stop) return request;
      // A repeat means nothing more, and must not count against a target's limit.
      const distinct = [...new Set(request.stop)];
      let stop = distinct.length === request.stop.length ? request.stop : distinct;
      // An empty sequence stops nothing, and vLLM refuses it with a 400; within OpenAI's 4 it
      // would take the place of a sequence that does stop something (the route's own). Anthropic
      // also refuses a sequence of whitespace alone (OpenAI clients often send "\n"): it cannot be
      // honoured there, and sending it would fail the whole request. Elsewhere "\n" is a real stop.
      const anthropic = target.providerType === "anthropic";
      const blank = stop.filter((text) => (anthropic ? text.trim() === "" : text === ""));
      if (blank.length > 0) {
        stop = stop.filter((text) => !blank.includes(text));
        log.notes.push(`stop=dropped:${blank.length}`);
        log.warnings.push(
          anthropic
            ? `${target.model} refuses stop sequences of whitespace alone; not sent: ${quoted(blank)}`
            : `an empty stop sequence stops nothing (and local decoders refuse it); not sent to ${target.model}`,
        );
      }
      // OpenAI takes at most 4 on every model that takes any; a model the price list does not know
      // is held to that too, rather than sent a list OpenAI answers with a 400.
      const limit = findModelLimits(target.providerType, target.model).maxStopSequences ?? (target.providerType === "openai" ? OPENAI_MAX_STOP_SEQUENCES : undefined);
      if (limit !== undefined && stop.length > limit) {
        log.notes.push(`stop=trimmed:${stop.length}->${limit}`);
        log.warnings.push(`${target.model} takes at most ${limit} stop sequences; not sent: ${quoted(stop.slice(limit))}`);
        stop = stop.slice(0, limit);
      }
      if (stop === request.stop) return request;
      return { ...request, stop: stop.length > 0 ? stop : undefined };
    },
  };
}

const quoted = (sequences: string[]) => sequences.map((text) => JSON.stringify(text)).join(", ");
