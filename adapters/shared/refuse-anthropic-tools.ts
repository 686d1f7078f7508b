import { GatewayError } from "../../src/errors/gateway-error.ts";
import type { ChatRequest } from "../../src/model/chat-request.ts";

/**
 * A tool Anthropic defines (its text editor, bash, memory, computer use) has a schema only Claude
 * knows: an OpenAI-shaped target would be sent a tool it cannot call correctly. Refused, so a
 * route moves on to a Claude target, or the client hears which tool needs one.
 */
export function refuseAnthropicDefinedTools(request: ChatRequest, providerName: string): GatewayError | undefined {
  const index = request.tools?.findIndex((tool) => tool.anthropicDefined) ?? -1;
  if (index < 0) return undefined;
  const tool = request.tools![index]!;
  return new GatewayError(
    "invalid_request",
    `tools[${index}]: ${tool.anthropicDefined!.type} is a tool Anthropic defines, which only Claude models take; provider "${providerName}" cannot be sent it: route this request to a Claude model, or describe the tool with an input_schema`,
    { param: `tools[${index}]` },
  );
}
