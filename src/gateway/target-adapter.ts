import type { PolicyChain } from "../../policies/policy-chain.ts";
import type { PolicyContext, PolicyLog } from "../../policies/policy.ts";
import type { AdaptToTarget } from "../routing/route-chat.ts";

/**
 * The per-target step of a route, as the router calls it before each target: the provider's own
 * refusals (a 400 moves on to the next target), then the route's per-target policies. `heard`
 * gets what the policies did (the chat path notes it in the cost record).
 */
export function targetAdapter(chain: PolicyChain, context: PolicyContext, heard: (log: PolicyLog) => void = () => {}): AdaptToTarget {
  return async (request, target) => {
    const refusal = target.model.refuse?.(request);
    if (refusal) throw refusal;
    const policyTarget = { providerName: target.model.providerName, providerType: target.model.providerType, model: target.modelName };
    const adapted = await chain.adaptToTarget(request, policyTarget, context);
    heard(adapted.log);
    return adapted.request;
  };
}
