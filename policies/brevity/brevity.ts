import { z } from "zod";
import type { Policy } from "../policy.ts";

// Asking for short answers is the bluntest output lever, and on routes where short answers serve
// (classification, extraction, chat snippets) one of the cheapest. The instruction goes at the END
// of the system prompt (the first line is the format's), and the record says it was there, so
// reports can compare output tokens with and without it.

export const brevityOptionsSchema = z
  .strictObject({
    maxSentences: z.number().int().positive().optional(),
    /** Your own wording instead of "Answer in at most N sentences." */
    instruction: z.string().min(1).optional(),
  })
  .refine((options) => options.maxSentences !== undefined || options.instruction !== undefined, {
    error: 'give maxSentences (e.g. 3) or an instruction (e.g. "Answer in one line.")',
  })
  // The instruction replaces the N-sentence line: with both, the number would be ignored unseen.
  .refine((options) => options.maxSentences === undefined || options.instruction === undefined, {
    error: 'give maxSentences or an instruction, not both: the instruction replaces "Answer in at most N sentences."; remove maxSentences, or write the number into the instruction',
    path: ["maxSentences"],
  });

export type BrevityOptions = z.output<typeof brevityOptionsSchema>;

export function brevityPolicy(options: BrevityOptions): Policy {
  const sentences = options.maxSentences === 1 ? "one sentence" : `at most ${options.maxSentences} sentences`;
  const line = options.instruction ?? `Answer in ${sentences}.`;
  return {
    name: "brevity",
    apply(request, log) {
      log.notes.push(`brevity=${options.maxSentences ?? "custom"}`);
      // The last of the system messages the request opens with: a system prompt given in several
      // blocks (Anthropic's `system` array, an OpenAI client's developer + system messages) ends
      // with its last one. A system message later in an OpenAI conversation (an agent's reminder)
      // is not the system prompt, and changed it would change the prefix OpenAI caches each turn.
      let leading = 0;
      while (request.messages[leading]?.role === "system") leading++;
      const systemAt = leading - 1;
      const messages = [...request.messages];
      if (systemAt === -1) messages.unshift({ role: "system", content: line });
      else {
        const system = messages[systemAt] as { role: "system"; content: string };
        messages[systemAt] = { ...system, content: `${system.content}\n${line}` };
      }
      return { ...request, messages };
    },
  };
}
