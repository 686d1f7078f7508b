import { configSchema, type Config, type ProviderConfig } from "./config-schema.ts";
import { formatConfigIssues } from "./format-config-issues.ts";
import { missingLongContextWarnings, unroutedPriceWarnings } from "../pricing/find-model-price.ts";
import { unpricedPriorityWarnings } from "../pricing/service-tier.ts";
import { retirementWarnings } from "./retirement-warnings.ts";

// Turns a raw JSON value plus an environment into a config the gateway can run on: validated,
// secrets read from the environment, and every problem reported at once.

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid tollgate config:\n  - ${problems.join("\n  - ")}`);
    this.name = "ConfigError";
  }
}

export type ResolvedProvider = ProviderConfig & {
  name: string;
  /** The key read from the environment; undefined for keyless local decoders or a missing optional key. */
  apiKeyValue?: string;
  /** Set when an optional provider's key variable is missing: requests to it fail with this message. */
  unavailableReason?: string;
};

export type ResolvedConfig = Omit<Config, "providers"> & {
  providers: Record<string, ResolvedProvider>;
  redisUrl?: string;
  /** Start-up notes for the log (e.g. an optional provider without its key). */
  warnings: string[];
  /** Each route's policy names in the order the file lists them (validation does not keep order). */
  policyOrder: Record<string, string[]>;
};

export type Environment = Record<string, string | undefined>;

/** `now`: the time the retirement days of the bundled model list are read against. */
export function resolveConfig(raw: unknown, env: Environment, { now = Date.now() }: { now?: number } = {}): ResolvedConfig {
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) throw new ConfigError(formatConfigIssues(parsed.error.issues));
  const config = parsed.data;

  const problems: string[] = [];
  const warnings: string[] = [];
  const providers: Record<string, ResolvedProvider> = {};
  for (const [name, provider] of Object.entries(config.providers)) {
    const resolved: ResolvedProvider = { ...provider, name };
    if (provider.apiKey) {
      const value = env[provider.apiKey.env];
      // Blank counts as unset: a key of spaces passed start-up, and then every call failed upstream.
      if (value?.trim()) resolved.apiKeyValue = value;
      else if (provider.optional) {
        resolved.unavailableReason = `provider "${name}" has no API key: set ${provider.apiKey.env} and restart tollgate`;
        warnings.push(resolved.unavailableReason);
      } else {
        problems.push(`providers.${name}.apiKey: environment variable ${provider.apiKey.env} is ${value === undefined || value === "" ? "not set" : "blank"}; set it, or mark the provider "optional": true`);
      }
    }
    providers[name] = resolved;
    const routedModels = Object.values(config.routes).flatMap((route) => route.targets.filter((target) => target.provider === name).map((target) => target.model));
    warnings.push(
      ...missingLongContextWarnings(name, provider, routedModels),
      ...unpricedPriorityWarnings(name, provider, routedModels),
      ...unroutedPriceWarnings(name, provider, routedModels),
    );
  }

  warnings.push(...retirementWarnings(config.routes, config.providers, now));

  let redisUrl: string | undefined;
  const redisRef = config.store?.redisUrl;
  if (redisRef) {
    redisUrl = env[redisRef.env];
    if (!redisUrl && config.store?.optional) warnings.push(`store.redisUrl: ${redisRef.env} is not set; using the embedded store`);
    else if (!redisUrl) {
      problems.push(`store.redisUrl: environment variable ${redisRef.env} is not set; set it, or add "optional": true to "store" to use the embedded store without it (budgets then hold in this process only)`);
    }
  }

  if (problems.length > 0) throw new ConfigError(problems);
  const rawRoutes = (raw as { routes?: Record<string, { policies?: object }> }).routes ?? {};
  const policyOrder = Object.fromEntries(Object.keys(config.routes).map((name) => [name, Object.keys(rawRoutes[name]?.policies ?? {})]));
  return { ...config, providers, redisUrl, warnings, policyOrder };
}
