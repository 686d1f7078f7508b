import type { RedisClient } from "../store/redis-connection.ts";
import {
  MINUTE_MS,
  longestRateWait,
  type AdmissionStore,
  type AdmitPlan,
  type AdmitResult,
  type RateRefusal,
  type ScopeLevel,
  type SettlePlan,
} from "./admission-store.ts";
import { nextTurn } from "../runtime/next-turn.ts";

// Budgets and rate limits on Redis: admission is ONE script (every rate limit and every budget
// scope checked, then all reserved, or nothing written), settlement another (batched). Every key carries
// the hash tag {tollgate:budgets}, so both scripts stay within one Redis Cluster slot; the cost
// is that all budget state lives on one shard, which a budget's few keys per request can afford.
//
//   P{tollgate:budgets}:scope:<scope>|<window>    hash   spent, reserved (nano-dollars)
//   P{tollgate:budgets}:reservations              hash   request id → {"keys": [...], "amount": n}
//   P{tollgate:budgets}:expiries                  zset   request id, scored by when it frees itself
//   P{tollgate:budgets}:settled:<request id>      string marks a settled request for an hour
//   P{tollgate:budgets}:rate:<scope>|rpm|<minute> string requests in that minute (tpm: tokens)
//   P{tollgate:budgets}:tpm-counted:<request id>  string its admission counted tokens against tpm (3 minutes)

/** How long a scope key outlives its window (for reports): 40 days. */
const KEEP_CLOSED_WINDOW_MS = 40 * 24 * 3_600_000;

/**
 * Frees reservations whose time is up, all of them (any call sweeps). In batches of 100: after a
 * gateway with thousands of requests in flight died, every one of its holds must go before the
 * next admission is weighed, or that admission is refused for money nobody holds any more.
 */
const SWEEP = `
-- A closed window is kept 40 days for reports, then dropped. Set by the admission that makes a
-- scope key and by a settle that makes it again (one without a TTL would stay for ever).
local function expire_scope(key, ends)
  if ends > 0 then redis.call('PEXPIREAT', key, ends + ${KEEP_CLOSED_WINDOW_MS}) end
end
-- Amounts travel as text: Lua would print a large number as 1e+15, and "-0", which HINCRBY refuses.
-- A key gone since (dropped, deleted, Redis restarted empty) took the hold with it: releasing it
-- there made the key again, with a negative reservation and no TTL.
local function release(reservation)
  local amount = tonumber(reservation.amount)
  if not amount or amount == 0 then return end
  local negative = string.format('%d', -amount)
  for _, key in ipairs(reservation.keys) do
    if redis.call('EXISTS', key) == 1 then redis.call('HINCRBY', key, 'reserved', negative) end
  end
end
local function sweep(now)
  repeat
    local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 100)
    for _, id in ipairs(expired) do
      local held = redis.call('HGET', KEYS[2], id)
      if held then
        local reservation = cjson.decode(held)
        release(reservation)
        redis.call('HDEL', KEYS[2], id)
      end
      redis.call('ZREM', KEYS[1], id)
    end
  until #expired < 100
end
`;

// KEYS: expiries, reservations, then n scope keys, then 4 per rate (rpm now, rpm before, tpm now,
//       tpm before), then the request's tpm-counted marker.
// ARGV: now, request id, expires at, amount, n, m, then per scope: limit, mode, window end;
//       per rate: rpm limit (0: none), tpm limit (0: none); then the tokens to count against tpm.
const ADMIT = `${SWEEP}
local now = tonumber(ARGV[1])
local amount = tonumber(ARGV[4])
local n, m = tonumber(ARGV[5]), tonumber(ARGV[6])
local elapsed = (now % ${MINUTE_MS}) / ${MINUTE_MS}
sweep(now)
-- The same request admitted again (ioredis resends a command whose reply a dropped connection
-- lost): it holds its reservation already, and reserving twice would leave one amount held.
-- Its levels are answered as they are, with no check and nothing counted again.
local again = redis.call('HEXISTS', KEYS[2], ARGV[2]) == 1
-- Every refusing check, each as (rate, kind, both minutes' counts), from which the caller works
-- out the longest retry-after: the first alone may be shorter than another scope's.
local refused = {}
for j = 1, again and 0 or m do
  local base = 2 + n + (j - 1) * 4
  local rpm, tpm = tonumber(ARGV[6 + n * 3 + (j - 1) * 2 + 1]), tonumber(ARGV[6 + n * 3 + (j - 1) * 2 + 2])
  local function counts(current, previous)
    return tonumber(redis.call('GET', KEYS[previous]) or '0'), tonumber(redis.call('GET', KEYS[current]) or '0')
  end
  local before, now_count = counts(base + 1, base + 2)
  if rpm > 0 and before * (1 - elapsed) + now_count + 1 > rpm then
    for _, value in ipairs({j, 'rpm', before, now_count}) do table.insert(refused, value) end
  end
  before, now_count = counts(base + 3, base + 4)
  if tpm > 0 and before * (1 - elapsed) + now_count >= tpm then
    for _, value in ipairs({j, 'tpm', before, now_count}) do table.insert(refused, value) end
  end
end
if #refused > 0 then return {'rate', refused} end
local levels = {}
local soft = {}
-- Of the hard scopes that refuse, the one that frees last (a total budget never does): a retry
-- when it resets is the first that can pass.
local blocking, blocking_ends
for i = 1, n do
  local key = KEYS[2 + i]
  local spent = tonumber(redis.call('HGET', key, 'spent') or '0')
  local reserved = tonumber(redis.call('HGET', key, 'reserved') or '0')
  local limit, mode = tonumber(ARGV[6 + (i - 1) * 3 + 1]), ARGV[6 + (i - 1) * 3 + 2]
  if not again and spent + reserved + amount > limit then
    if mode == 'hard' then
      local ends = tonumber(ARGV[6 + (i - 1) * 3 + 3])
      if ends == 0 then ends = math.huge end
      if not blocking or ends > blocking_ends then blocking, blocking_ends = i, ends end
    else
      table.insert(soft, i)
    end
  end
  table.insert(levels, spent)
  table.insert(levels, reserved)
end
if blocking then return {'budget', blocking, levels[blocking * 2 - 1], levels[blocking * 2]} end
if again then return {'ok', levels, soft} end
local keys = {}
for i = 1, n do
  local key = KEYS[2 + i]
  table.insert(keys, key)
  redis.call('HINCRBY', key, 'reserved', ARGV[4])
  expire_scope(key, tonumber(ARGV[6 + (i - 1) * 3 + 3]))
end
-- Rates alone hold no money, but the entry is what tells a resent admission (above) from a new
-- one: without it, the resend would count the request, and its tokens, twice.
if n > 0 or m > 0 then
  -- The amount as text: cjson writes numbers with 14 significant digits.
  redis.call('HSET', KEYS[2], ARGV[2], cjson.encode({keys = keys, amount = ARGV[4]}))
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
end
local tokens = ARGV[6 + n * 3 + m * 2 + 1]
local counted = false
for j = 1, m do
  local key = KEYS[2 + n + (j - 1) * 4 + 1]
  redis.call('INCR', key)
  redis.call('PEXPIRE', key, ${3 * MINUTE_MS})
  if tonumber(ARGV[6 + n * 3 + (j - 1) * 2 + 2]) > 0 and tokens ~= '0' then
    local tpm_key = KEYS[2 + n + (j - 1) * 4 + 3]
    redis.call('INCRBY', tpm_key, tokens)
    redis.call('PEXPIRE', tpm_key, ${3 * MINUTE_MS})
    counted = true
  end
end
-- What tells the settle that this Redis still holds the count it corrects: the reservation entry
-- goes when the reservation expires, and the counts outlive it (as long as the minute counters).
if counted then redis.call('SET', KEYS[#KEYS], '1', 'PX', ${3 * MINUTE_MS}) end
return {'ok', levels, soft}
`;

// Settles a batch: the settlements issued in one event-loop turn, in one call. Each one is applied
// on its own (a failing one does not stop those after it) and gets its own result: 1, or why not.
// KEYS: expiries, reservations, then per settlement: its settled marker, n scope keys, m tpm keys
//       of this minute, m tpm keys of the admission's minute, its tpm-counted marker.
// ARGV: now, count, then per settlement: request id, actual, tokens, n, m, tokens its admission
//       counted, then per scope key: when its window ends (0: never; -1: not known).
const SETTLE = `${SWEEP}
local function settle(k, a, id, actual, tokens, n, m, reserved)
  local counted_marker = KEYS[k + n + 2 * m + 1]
  -- Checked before anything is written: Redis does not undo a script's writes.
  if not (string.match(actual, '^%-?%d+$') and string.match(tokens, '^%d+$') and string.match(reserved, '^%d+$')) then
    error('actual cost and tokens must be whole numbers, got ' .. actual .. ', ' .. tokens .. ' and ' .. reserved)
  end
  local ends = {}
  for i = 1, n do
    if not string.match(ARGV[a + 5 + i], '^%-?%d+$') then error('window ends must be whole numbers, got ' .. ARGV[a + 5 + i]) end
    ends[i] = tonumber(ARGV[a + 5 + i])
  end
  if redis.call('EXISTS', KEYS[k]) == 1 then return end
  local held = redis.call('HGET', KEYS[2], id)
  if held then
    release(cjson.decode(held))
    redis.call('HDEL', KEYS[2], id)
    redis.call('ZREM', KEYS[1], id)
  end
  -- A scope key gone since the admission (its window closed 40 days ago, an operator deleted it,
  -- Redis restarted empty) is made again with the expiry an admission gives it: a past window's
  -- then goes at once (the ledger has the cost), the current one's counts the spend. Where the
  -- window's end is not known (a settlement kept by an earlier version), only a key still there.
  for i = 1, n do
    local key = KEYS[k + i]
    if ends[i] >= 0 or redis.call('EXISTS', key) == 1 then
      redis.call('HINCRBY', key, 'spent', actual)
      if redis.call('PTTL', key) == -1 then expire_scope(key, ends[i]) end
    end
  end
  -- The admission's count gives way to the tokens used, in its minute while that still counts and
  -- this Redis still holds that count (its marker: after Redis lost its data, the minute's
  -- counter holds only later admissions, not this one's bound); otherwise the tokens count in
  -- this one. Not the reservation entry, which goes when the reservation expires: the count
  -- stayed, and the tokens were counted twice.
  local still_counted = m > 0 and reserved ~= '0' and redis.call('EXISTS', counted_marker) == 1
  for j = 1, m do
    local admitted_key = KEYS[k + n + m + j]
    if still_counted and redis.call('EXISTS', admitted_key) == 1 then
      redis.call('INCRBY', admitted_key, tonumber(tokens) - tonumber(reserved))
    else
      redis.call('INCRBY', KEYS[k + n + j], tokens)
      redis.call('PEXPIRE', KEYS[k + n + j], ${3 * MINUTE_MS})
    end
  end
  if m > 0 then redis.call('DEL', counted_marker) end
  -- Marked last, so a settlement that failed half-way is redone by its retry. The marker only
  -- has to outlive retries of this settle (seconds to minutes): an hour.
  redis.call('SET', KEYS[k], '1', 'PX', 3600000)
end
sweep(tonumber(ARGV[1]))
local results = {}
local k, a = 3, 3
for p = 1, tonumber(ARGV[2]) do
  local n, m = tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4])
  local ok, failure = pcall(settle, k, a, ARGV[a], ARGV[a + 1], ARGV[a + 2], n, m, ARGV[a + 5])
  if ok then results[p] = 1
  elseif type(failure) == 'table' then results[p] = tostring(failure.err)
  else results[p] = tostring(failure) end
  k, a = k + 2 + n + 2 * m, a + 6 + n
end
return results
`;

// KEYS: expiries, reservations, then scope keys. ARGV: now.
const LEVELS = `${SWEEP}
sweep(tonumber(ARGV[1]))
local out = {}
for i = 3, #KEYS do
  table.insert(out, tonumber(redis.call('HGET', KEYS[i], 'spent') or '0'))
  table.insert(out, tonumber(redis.call('HGET', KEYS[i], 'reserved') or '0'))
end
return out
`;

type Scripts = {
  tollgateAdmit(...args: (string | number)[]): Promise<[string, ...unknown[]]>;
  tollgateSettle(...args: (string | number)[]): Promise<(number | string)[]>;
  tollgateLevels(...args: (string | number)[]): Promise<number[]>;
};

/** Settlements per script call: one call holds Redis for its whole batch. */
const MAX_SETTLE_BATCH = 64;
/** Reservations per ZADD when renewing. */
const MAX_EXTEND_BATCH = 1_000;

type QueuedSettlement = { plan: SettlePlan; resolve(): void; reject(error: unknown): void };

export class RedisAdmissionStore implements AdmissionStore {
  private readonly redis: RedisClient & Scripts;
  private readonly base: string;
  private readonly settling: QueuedSettlement[] = [];

  constructor(redis: RedisClient, prefix = "") {
    redis.defineCommand("tollgateAdmit", { lua: ADMIT });
    redis.defineCommand("tollgateSettle", { lua: SETTLE });
    redis.defineCommand("tollgateLevels", { lua: LEVELS });
    this.redis = redis as RedisClient & Scripts;
    this.base = `${prefix}{tollgate:budgets}`;
  }

  /** ioredis's own view of the connection: anything but "ready" (connecting, reconnecting, closed) is not. */
  connected(): boolean {
    return this.redis.status === "ready";
  }

  private scopeKey = (key: string) => `${this.base}:scope:${key}`;
  private tpmCountedKey = (requestId: string) => `${this.base}:tpm-counted:${requestId}`;
  private rateKey = (scope: string, kind: "rpm" | "tpm", minute: number) => `${this.base}:rate:${scope}|${kind}|${minute}`;
  private get fixedKeys() {
    return [`${this.base}:expiries`, `${this.base}:reservations`];
  }

  async admit(plan: AdmitPlan): Promise<AdmitResult> {
    const minute = Math.floor(plan.now / MINUTE_MS);
    const keys = [
      ...this.fixedKeys,
      ...plan.scopes.map((scope) => this.scopeKey(scope.key)),
      ...plan.rates.flatMap((rate) => [
        this.rateKey(rate.scope, "rpm", minute),
        this.rateKey(rate.scope, "rpm", minute - 1),
        this.rateKey(rate.scope, "tpm", minute),
        this.rateKey(rate.scope, "tpm", minute - 1),
      ]),
      this.tpmCountedKey(plan.requestId),
    ];
    const args = [
      plan.now,
      plan.requestId,
      plan.reservationExpiresAt,
      plan.amountNano,
      plan.scopes.length,
      plan.rates.length,
      ...plan.scopes.flatMap((scope) => [scope.limitNano, scope.mode, scope.windowEndsAt]),
      ...plan.rates.flatMap((rate) => [rate.rpm ?? 0, rate.tpm ?? 0]),
      plan.tokens ?? 0,
    ];
    const [outcome, ...rest] = await this.redis.tollgateAdmit(keys.length, ...keys, ...args);
    if (outcome === "rate") {
      const flat = rest[0] as (number | string)[];
      const refusals: RateRefusal[] = [];
      for (let at = 0; at < flat.length; at += 4) {
        refusals.push({ rate: plan.rates[Number(flat[at]) - 1]!, kind: flat[at + 1] as "rpm" | "tpm", previous: Number(flat[at + 2]), current: Number(flat[at + 3]) });
      }
      return longestRateWait(refusals, plan.now);
    }
    if (outcome === "budget") {
      const scope = plan.scopes[Number(rest[0]) - 1]!;
      return { admitted: false, reason: "budget", scope, level: { spentNano: Number(rest[1]), reservedNano: Number(rest[2]) } };
    }
    const flat = rest[0] as number[];
    const soft = (rest[1] as number[]).map((index) => plan.scopes[index - 1]!.scope);
    const levels = plan.scopes.map((_, index) => ({ spentNano: Number(flat[index * 2]), reservedNano: Number(flat[index * 2 + 1]) }));
    return { admitted: true, levels, softExceeded: soft };
  }

  /**
   * Settlements wait for the end of the event-loop turn and go to Redis together, in one script
   * call per batch: under load, one command for many requests instead of one each.
   */
  settle(plan: SettlePlan): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.settling.push({ plan, resolve, reject }) === 1) nextTurn(() => this.flushSettlements());
    });
  }

  private flushSettlements(): void {
    const queued = this.settling.splice(0);
    for (let at = 0; at < queued.length; at += MAX_SETTLE_BATCH) {
      const batch = queued.slice(at, at + MAX_SETTLE_BATCH);
      const keys = [...this.fixedKeys];
      const args: (string | number)[] = [Math.max(...batch.map(({ plan }) => plan.now)), batch.length];
      for (const { plan } of batch) {
        const minute = Math.floor(plan.now / MINUTE_MS);
        const admittedMinute = Math.floor((plan.admittedAt ?? plan.now) / MINUTE_MS);
        keys.push(
          `${this.base}:settled:${plan.requestId}`,
          ...plan.scopeKeys.map(this.scopeKey),
          ...plan.rateScopes.map((scope) => this.rateKey(scope, "tpm", minute)),
          ...plan.rateScopes.map((scope) => this.rateKey(scope, "tpm", admittedMinute)),
          this.tpmCountedKey(plan.requestId),
        );
        // The admission's minute counts only while it is in the window (this minute or the one
        // before); a request settled later has its tokens counted in this minute instead.
        const counted = admittedMinute >= minute - 1 ? (plan.reservedTokens ?? 0) : 0;
        // A settlement kept by an earlier version names no window ends: -1, not known.
        const ends = plan.windowEndsAt?.length === plan.scopeKeys.length ? plan.windowEndsAt : plan.scopeKeys.map(() => -1);
        args.push(plan.requestId, plan.actualNano, plan.tokens, plan.scopeKeys.length, plan.rateScopes.length, counted, ...ends);
      }
      // Runs on its own turn: a throw here would be uncaught, so every outcome goes to the callers.
      Promise.resolve()
        .then(() => this.redis.tollgateSettle(keys.length, ...keys, ...args))
        .then(
          (results) =>
            batch.forEach(({ plan, resolve, reject }, index) =>
              results[index] === 1 ? resolve() : reject(new Error(`settling ${plan.requestId} failed: ${String(results[index])}`)),
            ),
          (error: unknown) => batch.forEach(({ reject }) => reject(error)),
        );
    }
  }

  async extend(requestIds: string[], expiresAt: number): Promise<void> {
    // XX: only reservations still held (a settled or swept one is not brought back); GT: never earlier.
    for (let at = 0; at < requestIds.length; at += MAX_EXTEND_BATCH) {
      const members = requestIds.slice(at, at + MAX_EXTEND_BATCH).flatMap((requestId) => [expiresAt, requestId]);
      await this.redis.zadd(this.fixedKeys[0]!, "XX", "GT", ...members);
    }
  }

  async levels(scopeKeys: string[], now: number): Promise<ScopeLevel[]> {
    const keys = [...this.fixedKeys, ...scopeKeys.map(this.scopeKey)];
    const flat = await this.redis.tollgateLevels(keys.length, ...keys, now);
    return scopeKeys.map((_, index) => ({ spentNano: Number(flat[index * 2]), reservedNano: Number(flat[index * 2 + 1]) }));
  }
}
