import type { AdmissionStore, AdmitPlan, AdmitResult, ScopeLevel, SettlePlan } from "./admission-store.ts";
import type { DurableObjectNamespace } from "./durable-object-types.ts";

// The Workers entry's budget store: every operation is one call to the TollgateBudgets Durable
// Object (budgets-object.ts), which applies it atomically for all of the Worker's isolates. The
// price of exactness is a round trip to wherever that object runs.

/** The one object that holds every budget of this Worker. */
const OBJECT_NAME = "budgets";

export class DurableObjectAdmissionStore implements AdmissionStore {
  private readonly id: unknown;

  constructor(private readonly namespace: DurableObjectNamespace) {
    this.id = namespace.idFromName(OBJECT_NAME);
  }

  admit(plan: AdmitPlan): Promise<AdmitResult> {
    return this.call("admit", plan);
  }

  settle(plan: SettlePlan): Promise<void> {
    return this.call("settle", plan);
  }

  extend(requestIds: string[], expiresAt: number): Promise<void> {
    return this.call("extend", { requestIds, expiresAt });
  }

  levels(scopeKeys: string[], now: number): Promise<ScopeLevel[]> {
    return this.call("levels", { scopeKeys, now });
  }

  private async call<T>(operation: string, body: unknown): Promise<T> {
    // A stub per call: a stub belongs to the request that made it.
    const response = await this.namespace.get(this.id).fetch(`https://tollgate-budgets/${operation}`, { method: "POST", body: JSON.stringify(body) });
    if (!response.ok) throw new Error(`the budgets Durable Object answered ${operation} with HTTP ${response.status}: ${(await response.text()).slice(0, 200)}`);
    return (await response.json()) as T;
  }
}
