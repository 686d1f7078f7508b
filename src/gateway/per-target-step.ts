import type { PolicyChain } from "../../policies/policy-chain.ts";
import type { PolicyContext, PolicyLog, PolicyTarget } from "../../policies/policy.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import type { AdaptToTarget } from "../routing/route-chat.ts";

/**
 * The per-target step of a route, as the router calls it before each target: the provider's own
 * refusals, then the route's per-target policies. `heard` gets what the policies did (the chat
 * path notes it in the cost record). A refusal (a 400) skips the target (route-chat's Failures):
 * it is heard as `target=skipped:MODEL(PARAM)` with a warning saying why, kept whichever target
 * answers, so that a route whose first target never runs for such requests does not look as if
 * it did.
 */
export function perTargetStep(chain: PolicyChain, context: PolicyContext, heard: (log: PolicyLog, moment: "target" | "skipped") => void = () => {}): AdaptToTarget {
  return async (request, target) => {
    const policyTarget = { providerName: target.model.providerName, providerType: target.model.providerType, model: target.modelName };
    try {
      const refusal = target.model.refuse?.(request);
      if (refusal) throw refusal;
      const adapted = await chain.adaptToTarget(request, policyTarget, context);
      heard(adapted.log, "target");
      return adapted.request;
    } catch (error) {
      if (error instanceof GatewayError && error.status === 400) heard(skipped(policyTarget, error), "skipped");
      throw error;
    }
  };
}

function skipped(target: PolicyTarget, refusal: GatewayError): PolicyLog {
  return {
    notes: [`target=skipped:${target.model}(${refusal.param ?? refusal.code ?? "refused"})`],
    warnings: [`${target.model} (${target.providerName}) was not called: ${refusal.message}`],
  };
}
