import type { AdmitPlan, ScopeLevel, SettlePlan } from "./admission-store.ts";
import type { DurableObjectState, DurableObjectStorage } from "./durable-object-types.ts";
import { MemoryAdmissionStore, type AdmissionJournal, type Reservation } from "./memory-admission-store.ts";

// Budgets and rate limits for the Workers entry: one Durable Object holds them for every isolate
// of the Worker, the way one Redis shard does for Node gateways. Cloudflare runs a Durable Object
// in one place, one request at a time, so the embedded store's operations stay atomic across all
// isolates. Scope levels and reservations are written to its storage as they change (the object
// answers only once its writes are durable), so eviction or a deploy loses no spend; rate-limit
// counters and settled ids live in memory (they matter for a minute, or for a retry).

const LEVEL = "level:";
const RESERVATION = "reservation:";

export class TollgateBudgets {
  private store = new MemoryAdmissionStore();

  constructor(state: DurableObjectState) {
    void state.blockConcurrencyWhile(async () => {
      const levels = await state.storage.list<ScopeLevel>({ prefix: LEVEL });
      const reservations = await state.storage.list<Reservation>({ prefix: RESERVATION });
      this.store = new MemoryAdmissionStore(new StorageJournal(state.storage));
      this.store.restore(withoutPrefix(levels, LEVEL), withoutPrefix(reservations, RESERVATION));
    });
  }

  async fetch(request: Request): Promise<Response> {
    const operation = new URL(request.url).pathname.slice(1);
    const body = (await request.json()) as Record<string, unknown>;
    switch (operation) {
      case "admit":
        return Response.json(await this.store.admit(body as AdmitPlan));
      case "settle":
        await this.store.settle(body as SettlePlan);
        return Response.json(null);
      case "extend":
        await this.store.extend(body.requestIds as string[], body.expiresAt as number);
        return Response.json(null);
      case "levels":
        return Response.json(await this.store.levels(body.scopeKeys as string[], body.now as number));
      default:
        return new Response(`unknown operation "${operation}"`, { status: 404 });
    }
  }
}

/** Each change as one storage write; a Durable Object coalesces them and answers once they are durable. */
class StorageJournal implements AdmissionJournal {
  constructor(private readonly storage: DurableObjectStorage) {}

  level(scopeKey: string, level: ScopeLevel): void {
    void this.storage.put(LEVEL + scopeKey, { ...level });
  }

  reservation(requestId: string, reservation: Reservation | undefined): void {
    if (reservation) void this.storage.put(RESERVATION + requestId, { ...reservation });
    else void this.storage.delete(RESERVATION + requestId);
  }
}

function withoutPrefix<T>(entries: Map<string, T>, prefix: string): [string, T][] {
  return [...entries].map(([key, value]) => [key.slice(prefix.length), value]);
}
