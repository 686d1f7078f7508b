import type { AdmitPlan, ScopeLevel, SettlePlan } from "./admission-store.ts";
import type { DurableObjectState, DurableObjectStorage } from "./durable-object-types.ts";
import { MemoryAdmissionStore, type AdmissionJournal, type Reservation } from "./memory-admission-store.ts";

// Budgets and rate limits for the Workers entry: one Durable Object holds them for every isolate
// of the Worker, the way one Redis shard does for Node gateways. Cloudflare runs a Durable Object
// in one place, one request at a time, so the embedded store's operations stay atomic across all
// isolates. Scope levels and reservations are written to its storage as they change (the object
// answers only once its writes are durable), so eviction or a deploy loses no spend. Settled
// request ids are stored for an hour, so a settle retried across a restart counts once (Redis
// keeps the same marker); rate-limit counters live in memory (they matter for a minute). A level
// is kept 40 days after its window ends (as in Redis); the embedded store drops it then, and the
// journal deletes it here.

const LEVEL = "level:";
const RESERVATION = "reservation:";
const SETTLED = "settled:";
/** How long a settled marker outlives its settle: longer than any retry of it (seconds). */
const SETTLED_RETENTION_MS = 3_600_000;

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
      // Everything comes back, ended windows too: the first operation's sweep frees expired
      // reservations and then drops levels past their retention, through the journal.
      const reservations = withoutPrefix(await state.storage.list<Reservation>({ prefix: RESERVATION }), RESERVATION);
      const levels = withoutPrefix(await state.storage.list<StoredLevel>({ prefix: LEVEL }), LEVEL);
      const settledIds: string[] = [];
      const markers = withoutPrefix(await state.storage.list<number>({ prefix: SETTLED }), SETTLED).sort(([, a], [, b]) => a - b);
      for (const [requestId, at] of markers) {
        if (at + SETTLED_RETENTION_MS < now()) {
          void state.storage.delete(SETTLED + requestId);
          continue;
        }
        settledIds.push(requestId);
        this.journal.rememberSettled(requestId, at);
      }
      this.store = new MemoryAdmissionStore(this.journal);
      this.store.restore(levels, reservations, settledIds);
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

  level(scopeKey: string, level: ScopeLevel | undefined, windowEndsAt: number): void {
    if (!level) return void this.storage.delete(LEVEL + scopeKey);
    const stored: StoredLevel = { ...level, windowEndsAt };
    void this.storage.put(LEVEL + scopeKey, stored);
  }

  reservation(requestId: string, reservation: Reservation | undefined): void {
    if (reservation) void this.storage.put(RESERVATION + requestId, { ...reservation });
    else void this.storage.delete(RESERVATION + requestId);
  }

  /** Settled markers in the order they were written, from `settledHead` on: each is dropped an hour later. */
  private settledOrder: { requestId: string; at: number }[] = [];
  private settledHead = 0;

  settled(requestId: string, at: number): void {
    void this.storage.put(SETTLED + requestId, at);
    this.rememberSettled(requestId, at);
    while (this.settledHead < this.settledOrder.length && this.settledOrder[this.settledHead]!.at + SETTLED_RETENTION_MS < at) {
      void this.storage.delete(SETTLED + this.settledOrder[this.settledHead++]!.requestId);
    }
    // Let go of the dropped ones now and then, not one shift() (a copy of the rest) each time.
    if (this.settledHead > 1_024 && this.settledHead * 2 > this.settledOrder.length) {
      this.settledOrder = this.settledOrder.slice(this.settledHead);
      this.settledHead = 0;
    }
  }

  rememberSettled(requestId: string, at: number): void {
    this.settledOrder.push({ requestId, at });
  }
}

function withoutPrefix<T>(entries: Map<string, T>, prefix: string): [string, T][] {
  return [...entries].map(([key, value]) => [key.slice(prefix.length), value]);
}
