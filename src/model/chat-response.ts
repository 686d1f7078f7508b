import type { AssistantContent } from "./chat-request.ts";
import type { AnthropicAnswerIdentity, DecoderTimings, FinishReason, OpenAIAnnotation, OpenAIAnswerIdentity, OpenAIUsageDetails, RefusalDetails, TokenLogprob } from "./stream-part.ts";
import type { Usage } from "./usage.ts";

export type ChatResponse = OpenAIAnswerIdentity & AnthropicAnswerIdentity & {
  id: string;
  /** The model the provider says answered (may differ from the configured name, e.g. a dated snapshot). */
  model: string;
  content: AssistantContent[];
  finishReason: FinishReason;
  stopSequence?: string;
  /** Why Claude refused (its `stop_details`), where it said. */
  refusalDetails?: RefusalDetails;
  /** OpenAI's refusal text, kept apart from `content` (see the text-delta part). */
  refusal?: string;
  /** OpenAI's annotations of the text (a search model's citations; see the annotations part). */
  annotations?: OpenAIAnnotation[];
  /** Log probabilities of the answer's tokens, where the request asked for them. */
  logprobs?: TokenLogprob[];
  /** Log probabilities of the refusal's tokens (OpenAI's `logprobs.refusal`). */
  refusalLogprobs?: TokenLogprob[];
  /** The model's thinking before its answer (see the reasoning-delta part). */
  reasoning?: string;
  usage?: Usage;
  /** OpenAI's usage counts beyond the billed ones (see the usage part). */
  openAIUsageDetails?: OpenAIUsageDetails;
  /** What Anthropic's context editing did (`context_management`: the edits applied), as it said. */
  contextManagement?: Record<string, unknown>;
  /** Where the provider says inference ran (Anthropic's usage.inference_geo), which can change the price. */
  inferenceGeo?: string;
  timings?: DecoderTimings;
};
