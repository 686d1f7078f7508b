import { z } from "zod";
import { DEFAULT_TIMEOUT_MS } from "../../adapters/shared/timeouts.ts";
import { routePoliciesSchema } from "../../policies/policy-chain.ts";
import { budgetSchema, rateLimitSchema, teamSchema } from "../budgets/budget-config.ts";
import { ADMIN_NAME } from "../metering/cost-record.ts";
import { requiredAs } from "./format-config-issues.ts";
import { looksLikeASecret } from "./looks-like-a-secret.ts";

// The config file's contract. Every message here is written for the person editing the file:
// it says what is wrong and what to write instead. `formatConfigIssues` adds the path.

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Secrets are named by environment variable, never written into the file. */
export const secretSchema = z.strictObject(
  {
    env: z
      .string()
      // Checked first, and the only message when it fails: the value is a secret, so neither this
      // message nor a later one (the start-up log's "set NAME", the 503's) may repeat it.
      .refine((name) => !looksLikeASecret(name), {
        error:
          'this looks like the secret itself, not a variable\'s name: write the name of the environment variable that holds it (such as "OPENAI_API_KEY") and set that variable to the secret; as it was written in a file, consider rotating it',
        abort: true,
      })
      .regex(ENV_NAME, { error: "an environment variable name such as OPENAI_API_KEY" }),
  },
  {
    error: (issue) =>
      typeof issue.input === "string"
        ? 'secrets are never written in config: write {"env": "NAME_OF_VARIABLE"} and set that variable'
        : undefined,
  },
);

const usdPerMillion = z.number().nonnegative({ error: "a price in USD per 1M tokens, such as 2.5" });
const perSecond = z.number().positive({ error: "a measured speed in tokens per second, such as 2500" });

/**
 * The prices that replace a model's own once a request's whole input (cache reads and writes
 * included) is above a size: Anthropic's Sonnet 4 and 4.5 above 200k tokens, for example.
 */
const longContextSchema = z.strictObject({
  aboveInputTokens: z.number().int().positive({ error: "the input size in tokens above which these prices apply, such as 200000" }),
  inputPerMillion: usdPerMillion,
  outputPerMillion: usdPerMillion,
  cachedInputPerMillion: usdPerMillion.optional(),
  cacheWrite5mPerMillion: usdPerMillion.optional(),
  cacheWrite1hPerMillion: usdPerMillion.optional(),
});

/**
 * One model's price: USD per 1M tokens as the provider publishes it, or for a local decoder what
 * its GPU costs per hour and the tokens per second it was measured to move.
 */
const priceSchema = z
  .strictObject({
    inputPerMillion: usdPerMillion.optional(),
    outputPerMillion: usdPerMillion.optional(),
    cachedInputPerMillion: usdPerMillion.optional(),
    cacheWrite5mPerMillion: usdPerMillion.optional(),
    cacheWrite1hPerMillion: usdPerMillion.optional(),
    gpuHourUsd: z.number().positive({ error: "what one GPU hour costs in USD, such as 2.1" }).optional(),
    inputTokensPerSecond: perSecond.optional(),
    outputTokensPerSecond: perSecond.optional(),
    longContext: longContextSchema.optional(),
  })
  .superRefine((price, ctx) => {
    const perMillion = price.inputPerMillion !== undefined || price.outputPerMillion !== undefined;
    const gpu = price.gpuHourUsd !== undefined || price.inputTokensPerSecond !== undefined || price.outputTokensPerSecond !== undefined;
    if (perMillion && gpu) {
      ctx.addIssue({ code: "custom", message: "give either per-1M prices or a GPU-hour price, not both" });
    } else if (gpu && price.longContext) {
      ctx.addIssue({ code: "custom", path: ["longContext"], message: "a GPU-hour price has no long-context tier: remove longContext, or price the model per 1M tokens" });
    } else if (gpu) {
      for (const field of ["gpuHourUsd", "inputTokensPerSecond", "outputTokensPerSecond"] as const) {
        if (price[field] === undefined) ctx.addIssue({ code: "custom", path: [field], message: `a GPU-hour price needs ${field} too` });
      }
    } else {
      for (const field of ["inputPerMillion", "outputPerMillion"] as const) {
        if (price[field] === undefined) {
          ctx.addIssue({
            code: "custom",
            path: [field],
            message: `write ${field} (USD per 1M tokens), or price a local decoder with gpuHourUsd, inputTokensPerSecond and outputTokensPerSecond`,
          });
        }
      }
    }
  });

/** Overrides of the bundled price list: per model, and a default for this provider's other models. */
const pricingSchema = z.strictObject({
  default: priceSchema.optional(),
  models: z.record(z.string(), priceSchema).optional(),
});

/** The longest delay setTimeout honours (2^31 − 1 ms); past it, Node fires the timer after 1 ms. */
const MAX_TIMER_MS = 2_147_483_647;

const providerSchema = z
  .strictObject({
    type: z.enum(["openai", "anthropic", "openai-compatible"], {
      error: 'write one of "openai", "anthropic", "openai-compatible"',
    }),
    // http(s) only: "localhost:8080/v1" parses as a URL of scheme "localhost:", and every call fails.
    baseUrl: z
      .url({ protocol: /^https?$/, error: 'a full http(s) URL such as "http://127.0.0.1:8080/v1"' })
      // A password in the URL is not sent by every transport, and would show in errors and logs.
      .refine((url) => !/^[a-z]+:\/\/[^/?#]*@/i.test(url), { error: 'no user or password in the URL: give the provider\'s key as "apiKey": {"env": "NAME"}' })
      .optional(),
    apiKey: secretSchema.optional(),
    /** When true, a missing key variable is reported at start-up instead of stopping it. */
    optional: z.boolean().default(false),
    /** Until the answer (non-streaming) or the first part of a stream. */
    // Node's timers hold at most 2^31 − 1 ms (24.8 days); a longer one fires at once.
    timeoutMs: z.number().int().positive().max(MAX_TIMER_MS, { error: `at most ${MAX_TIMER_MS} ms (24.8 days), the longest timer Node keeps` }).default(DEFAULT_TIMEOUT_MS),
    /** The longest silence between two parts of a stream once it has started; default: timeoutMs. */
    streamIdleTimeoutMs: z.number().int().positive().max(MAX_TIMER_MS, { error: `at most ${MAX_TIMER_MS} ms (24.8 days), the longest timer Node keeps` }).optional(),
    /** The SDKs' own retries (openai and anthropic only); 0 by default because the route's fallback targets are the retry. */
    maxRetries: z.number().int().min(0).max(10).optional(),
    pricing: pricingSchema.optional(),
    /**
     * openai-compatible only: "pass" sends image URLs on for the decoder to fetch (from inside its
     * network); by default a request with one is refused for this provider (the route may try another).
     */
    imageUrls: z.enum(["refuse", "pass"], { error: 'write "refuse" or "pass"' }).optional(),
    /**
     * openai only: the tier every call asks for, in place of a client's "auto" or none. "default":
     * the standard rates, whatever the project's settings default to (priority, scale). "priority":
     * OpenAI's faster tier, recorded and reserved by budgets at its own prices. Left out, a call runs
     * at the project's default tier; its answer says which, and the record is priced at it.
     */
    serviceTier: z.enum(["default", "priority"], { error: 'write "default" or "priority", or leave it out for the project\'s own default tier' }).optional(),
  })
  .superRefine((provider, ctx) => {
    if (provider.imageUrls !== undefined && provider.type !== "openai-compatible") {
      ctx.addIssue({ code: "custom", path: ["imageUrls"], message: "only for openai-compatible providers (OpenAI and Anthropic fetch image URLs themselves): remove it" });
    }
    if (provider.maxRetries !== undefined && provider.type === "openai-compatible") {
      ctx.addIssue({ code: "custom", path: ["maxRetries"], message: "only for openai and anthropic providers (their SDKs retry; a local decoder's call is not retried): remove it, or add a fallback target to the route" });
    }
    if (provider.serviceTier !== undefined && provider.type !== "openai") {
      ctx.addIssue({ code: "custom", path: ["serviceTier"], message: "only for openai providers (the tier OpenAI serves a call at): remove it" });
    }
    if (provider.type !== "openai-compatible" && !provider.apiKey) {
      ctx.addIssue({
        code: "custom",
        path: ["apiKey"],
        message: `a ${provider.type} provider needs a key: write "apiKey": {"env": "${provider.type.toUpperCase()}_API_KEY"}`,
      });
    }
    if (provider.type === "openai-compatible" && !provider.baseUrl) {
      ctx.addIssue({
        code: "custom",
        path: ["baseUrl"],
        message: 'a local decoder needs its address: write "baseUrl": "http://127.0.0.1:8080/v1"',
      });
    }
  });

const targetSchema = z.strictObject({
  provider: z.string({ error: requiredAs("string", 'the name of a provider defined under "providers"') }).min(1, { error: 'the name of a provider defined under "providers"' }),
  model: z.string({ error: requiredAs("string", 'the model the provider serves, such as "gpt-4o"') }).min(1, { error: 'the model the provider serves, such as "gpt-4o"' }),
});

const routeSchema = z.strictObject({
  targets: z.array(targetSchema).min(1, { error: 'a route needs at least one target: [{"provider": "...", "model": "..."}]' }),
  /**
   * `fallback`: try targets in the order written, moving on when one fails before its first
   * token. `cheapest`: the same, in the order of this request's expected cost, targets that
   * recently missed `latencyGoalMs` last (src/routing/cheapest-first.ts).
   */
  strategy: z.enum(["fallback", "cheapest"], { error: 'write "fallback" (targets in the order written) or "cheapest" (cheapest for each request first)' }).default("fallback"),
  /**
   * With `strategy: "cheapest"`: the longest median time to first token (to the whole answer, for
   * requests that do not stream) that a target may have shown over its recent calls on this
   * gateway and still be tried before the targets that meet it.
   */
  latencyGoalMs: z.number().positive({ error: "a number of milliseconds above 0, such as 1500" }).optional(),
  /** The levers of policies/, applied in the order written here. */
  policies: routePoliciesSchema.optional(),
  budget: budgetSchema.optional(),
  /** Rejects (400) a request whose worst-case cost is above this, naming the max_tokens that fits. */
  maxCostPerRequestUsd: z.number().positive().optional(),
  rateLimit: rateLimitSchema.optional(),
}).superRefine((route, ctx) => {
  if (route.latencyGoalMs !== undefined && route.strategy !== "cheapest") {
    ctx.addIssue({ code: "custom", path: ["latencyGoalMs"], message: 'a latency goal orders targets only with "strategy": "cheapest": add it, or remove latencyGoalMs' });
  }
});

/** A key's hash; `command` is the CLI command that prints one for this kind of key. */
const hashOf = (command: string) =>
  z
    .string({ error: requiredAs("string", `"sha256:" and 64 lowercase hex digits; \`${command}\` prints one`) })
    .regex(/^sha256:[0-9a-f]{64}$/, { error: `write "sha256:" and 64 lowercase hex digits; \`${command}\` prints one` });
const keyHash = hashOf("npx tollgate keys create");

const virtualKeySchema = z.strictObject({
  id: z.string({ error: requiredAs("string", 'a name for this key that its cost records carry, such as "search-app"') }).min(1, { error: 'a name for this key, such as "search-app"' }),
  team: z.string({ error: requiredAs("string", 'the team this key bills to, such as "search"') }).min(1, { error: 'the team this key bills to, such as "search"' }),
  hash: keyHash,
  /** Routes this key may use; absent means every route. */
  routes: z.array(z.string()).optional(),
  budget: budgetSchema.optional(),
  rateLimit: rateLimitSchema.optional(),
});

export const configSchema = z
  .strictObject({
    $schema: z.string().optional(),
    server: z
      .strictObject({
        maxBodyBytes: z.number().int().positive().default(4 * 1024 * 1024),
        /**
         * A stream whose upstream is quiet this long gets a keep-alive (an SSE comment, or
         * Anthropic's ping), so idle timeouts of proxies in front of tollgate do not cut it. 0: off.
         */
        streamKeepAliveSeconds: z.number().min(0).max(MAX_TIMER_MS / 1000, { error: "at most 2147483 s, the longest timer Node keeps" }).default(15),
        /**
         * A stream whose client takes none of its bytes this long (it stopped reading; its socket's
         * buffers are full) is cut like a client that left: the upstream stopped, the record closed,
         * the budget reservation released. Like nginx's send_timeout. 0: wait for ever.
         */
        streamSendTimeoutSeconds: z.number().min(0).max(MAX_TIMER_MS / 1000, { error: "at most 2147483 s, the longest timer Node keeps" }).default(60),
        /**
         * On a stop signal (SIGTERM, SIGINT), how long streams in flight may run on before they
         * are cut and recorded as aborted: a long stream must not hold a rolling restart. At most
         * drainAnswersSeconds, when every connection still open is closed.
         */
        drainStreamsSeconds: z.number().min(0).max(MAX_TIMER_MS / 1000 - 13, { error: "at most 2147470 s, the longest timer Node keeps less the 13 s kept for writing records" }).default(8),
        /**
         * On a stop signal, how long answers not streamed may take before they are cut: a cut one
         * is retried by the client's SDK and paid twice. The process exits 13 s after it at the
         * latest (the records, settlements and ledger are written out meanwhile), so a supervisor's
         * grace period (Kubernetes' terminationGracePeriodSeconds, 30 by default) should be at least
         * this plus 15.
         */
        drainAnswersSeconds: z.number().min(0).max(MAX_TIMER_MS / 1000 - 13, { error: "at most 2147470 s, the longest timer Node keeps less the 13 s kept for writing records" }).default(15),
        /**
         * Node: how long a client may take to send its whole request, body included (408 after).
         * Node's own 300 let any key holder keep hundreds of connections open, each holding a body
         * of up to maxBodyBytes, by sending it slowly: budgets and rate limits are checked once the
         * body is in. 60 covers 4 MiB at 70 KB/s. Answers are not limited: a stream may run longer.
         */
        requestTimeoutSeconds: z.number().int().positive().max(3600, { error: "at most 3600 s" }).default(60),
        /**
         * Node: how long an idle keep-alive connection stays open for the client's next request.
         * A load balancer in front reuses its idle connections for up to its own idle timeout
         * (AWS ALB 60 s): one the gateway closed first is a 502 to a client. Node's own 5 s made
         * that happen; this must be longer than the balancer's (on Google Cloud's, above 600).
         */
        keepAliveTimeoutSeconds: z.number().int().positive().max(3600, { error: "at most 3600 s" }).default(65),
        /** How long a budget reservation outlives its gateway's last renewal of it (default 120): how soon a crashed gateway's holds free themselves. */
        reservationTtlSeconds: z.number().int().positive().max(MAX_TIMER_MS / 1000, { error: "at most 2147483 s, the longest timer Node keeps" }).optional(),
      })
      .default({ maxBodyBytes: 4 * 1024 * 1024, streamKeepAliveSeconds: 15, streamSendTimeoutSeconds: 60, drainStreamsSeconds: 8, drainAnswersSeconds: 15, requestTimeoutSeconds: 60, keepAliveTimeoutSeconds: 65 }),
    providers: z.record(z.string(), providerSchema, {
      error: requiredAs("object", 'an object of providers by name, e.g. {"openai": {"type": "openai", "apiKey": {"env": "OPENAI_API_KEY"}}}'),
    }),
    routes: z.record(z.string(), routeSchema, {
      error: requiredAs("object", 'an object of routes by name, e.g. {"gpt": {"targets": [{"provider": "openai", "model": "gpt-4o"}]}}'),
    }),
    keys: z.array(virtualKeySchema).default([]),
    /** Per-team settings; a key's `team` names its entry here. */
    teams: z.record(z.string(), teamSchema).optional(),
    admin: z.strictObject({ keyHash: hashOf("npx tollgate keys create --admin") }).optional(),
    /**
     * Where cost records go: Redis when `redisUrl` names a set variable, otherwise an append-only
     * file at `path` (default `.tollgate/ledger.jsonl`, relative to the working directory).
     */
    store: z
      .strictObject({
        redisUrl: secretSchema.optional(),
        /**
         * true: a `redisUrl` variable that is not set leaves the records in the embedded store
         * (with a warning) instead of stopping start-up, as the bundled example does. Off by
         * default: an instance whose deployment misspelled the variable would keep its budgets in
         * its own memory, and several such instances would spend past every limit.
         */
        optional: z.boolean().default(false),
        path: z.string().min(1).optional(),
        /**
         * Prepended to every Redis key, to keep deployments apart on one Redis. Without braces:
         * Redis Cluster places a key by the first `{…}` in it, and tollgate's own tags keep each
         * day's ledger keys, and the budget keys, in one slot.
         */
        keyPrefix: z
          .string()
          .regex(/^[^{}]*$/, {
            error: "a key prefix may not contain { or }: Redis Cluster places a key by the first {…} in it, which would split tollgate's own tags; use e.g. \"acme-prod:\"",
          })
          .default(""),
        /**
         * `redisUrl` is a Redis Cluster: its value lists one or more seed nodes, comma-separated
         * (`redis://10.0.0.1:6379,redis://10.0.0.2:6379`), and the rest are learned from them.
         */
        cluster: z.boolean().default(false),
      })
      .optional(),
    telemetry: z.strictObject({ captureContent: z.boolean().default(false) }).optional(),
  })
  .superRefine((config, ctx) => {
    const providerNames = Object.keys(config.providers);
    for (const [routeName, route] of Object.entries(config.routes)) {
      route.targets.forEach((target, index) => {
        if (!Object.hasOwn(config.providers, target.provider)) {
          ctx.addIssue({
            code: "custom",
            path: ["routes", routeName, "targets", index, "provider"],
            message: `unknown provider "${target.provider}": define it under "providers" or use one of ${providerNames.join(", ") || "(none defined)"}`,
          });
        }
      });
    }
    const seenIds = new Set<string>();
    const seenHashes = new Set<string>();
    config.keys.forEach((key, index) => {
      if (seenIds.has(key.id)) ctx.addIssue({ code: "custom", path: ["keys", index, "id"], message: `key id "${key.id}" is used twice; ids must be unique` });
      if (seenHashes.has(key.hash)) ctx.addIssue({ code: "custom", path: ["keys", index, "hash"], message: "this hash is used by another key; create a new key" });
      seenIds.add(key.id);
      seenHashes.add(key.hash);
      // The admin key's cost records carry this name; a tenant with it would have them in its totals.
      if (key.id === ADMIN_NAME) ctx.addIssue({ code: "custom", path: ["keys", index, "id"], message: `"${ADMIN_NAME}" is the admin key's name in cost records; choose another id` });
      if (key.team === ADMIN_NAME) ctx.addIssue({ code: "custom", path: ["keys", index, "team"], message: `"${ADMIN_NAME}" is the admin key's team in cost records; choose another team` });
      key.routes?.forEach((route, routeIndex) => {
        if (!Object.hasOwn(config.routes, route)) {
          ctx.addIssue({ code: "custom", path: ["keys", index, "routes", routeIndex], message: `unknown route "${route}": define it under "routes"` });
        }
      });
    });
    // A team is a key's `team`; an entry no key names (a misspelt team) would hold a budget that
    // never applies, so its team would spend without the limit it was meant to have.
    const keyTeams = [...new Set(config.keys.map((key) => key.team))];
    for (const team of Object.keys(config.teams ?? {})) {
      if (!keyTeams.includes(team)) {
        ctx.addIssue({
          code: "custom",
          path: ["teams", team],
          message: `no key belongs to team "${team}", so nothing it sets applies; ${keyTeams.length > 0 ? `the keys' teams are ${keyTeams.map((name) => `"${name}"`).join(", ")}` : "no key is configured"}: fix the name, or remove the entry`,
        });
      }
    }
    // The admin hash is checked first when a key is presented, so a virtual key with the same hash
    // would silently be the admin key: every route, no budget, every tenant's scopes.
    const sameAsAdmin = config.keys.find((key) => key.hash === config.admin?.keyHash);
    if (sameAsAdmin) {
      ctx.addIssue({
        code: "custom",
        path: ["admin", "keyHash"],
        message: `this is also the hash of key "${sameAsAdmin.id}", which would make that key the admin key; create a separate admin key with \`npx tollgate keys create --admin\``,
      });
    }
  });

export type Config = z.output<typeof configSchema>;
export type ProviderConfig = Config["providers"][string];
export type RouteConfig = Config["routes"][string];
export type VirtualKeyConfig = Config["keys"][number];
