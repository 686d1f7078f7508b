import type { AdmitPlan, ScopeLevel, SettlePlan } from "./admission-store.ts";
import type { DurableObjectState, DurableObjectStorage } from "./durable-object-types.ts";
import { MemoryAdmissionStore, type AdmissionJournal, type Reservation } from "./memory-admission-store.ts";

// Budgets and rate limits for the Workers entry: one Durable Object holds them for every isolate
// of the Worker, the way one Redis shard does for Node gateways. Cloudflare runs a Durable Object
// in one place, one request at a time, so the embedded store's operations stay atomic across all
// isolates. Scope levels and reservations are written to its storage as they change (the object
// answers only once its writes are durable), so eviction or a deploy loses no spend; rate-limit
// counters and settled ids live in memory (they matter for a minute, or for a retry). A level
// is kept 40 days after its window ends (as in Redis), then dropped when the object starts.

const LEVEL = "level:";
const RESERVATION = "reservation:";
const LEVEL_RETENTION_MS = 40 * 86_400_000;

/** A level as stored: with the end of its window (0: a `total` window, or not known yet). */
type StoredLevel = ScopeLevel & { windowEndsAt: number };

export class TollgateBudgets {
  private store = new MemoryAdmissionStore();
  private readonly journal: StorageJournal;
  /** Resolves once the stored state is loaded (requests wait for it anyway: blockConcurrencyWhile). */
  readonly loaded: Promise<void>;

  constructor(state: DurableObjectState, _env?: unknown, now: () => number = Date.now) {
    this.journal = new StorageJournal(state.storage);
    this.loaded = state.blockConcurrencyWhile(async () => {
      const levels: [string, ScopeLevel][] = [];
      for (const [key, level] of withoutPrefix(await state.storage.list<StoredLevel>({ prefix: LEVEL }), LEVEL)) {
        if (level.windowEndsAt > 0 && level.windowEndsAt + LEVEL_RETENTION_MS < now()) {
          void state.storage.delete(LEVEL + key);
          continue;
        }
        this.journal.windowEnds.set(key, level.windowEndsAt);
        levels.push([key, { spentNano: level.spentNano, reservedNano: level.reservedNano }]);
      }
      const reservations = await state.storage.list<Reservation>({ prefix: RESERVATION });
      this.store = new MemoryAdmissionStore(this.journal);
      this.store.restore(levels, withoutPrefix(reservations, RESERVATION));
    });
  }

  async fetch(request: Request): Promise<Response> {
    const operation = new URL(request.url).pathname.slice(1);
    const body = (await request.json()) as Record<string, unknown>;
    switch (operation) {
      case "admit": {
        const plan = body as AdmitPlan;
        for (const scope of plan.scopes) this.journal.windowEnds.set(scope.key, scope.windowEndsAt);
        return Response.json(await this.store.admit(plan));
      }
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
  /** Each scope key's window end, from the admissions that charged it. */
  readonly windowEnds = new Map<string, number>();

  constructor(private readonly storage: DurableObjectStorage) {}

  level(scopeKey: string, level: ScopeLevel): void {
    const stored: StoredLevel = { ...level, windowEndsAt: this.windowEnds.get(scopeKey) ?? 0 };
    void this.storage.put(LEVEL + scopeKey, stored);
  }

  reservation(requestId: string, reservation: Reservation | undefined): void {
    if (reservation) void this.storage.put(RESERVATION + requestId, { ...reservation });
    else void this.storage.delete(RESERVATION + requestId);
  }
}

function withoutPrefix<T>(entries: Map<string, T>, prefix: string): [string, T][] {
  return [...entries].map(([key, value]) => [key.slice(prefix.length), value]);
}
