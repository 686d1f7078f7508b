import { GatewayError } from "../errors/gateway-error.ts";
import type { VirtualKeyConfig } from "../config/config-schema.ts";
import { constantTimeEqual, hashKey } from "./key-hash.ts";

export type Caller =
  | { kind: "key"; key: VirtualKeyConfig }
  | { kind: "admin" };

/**
 * Finds the caller for a presented key. The lookup is by hash: an attacker who times the map
 * lookup learns about a sha256 of their own guess, never about a real key. The final comparison
 * is constant-time anyway, so no code path compares secrets with an early exit.
 */
export function createAuthenticator(keys: VirtualKeyConfig[], adminKeyHash?: string) {
  const byHash = new Map(keys.map((key) => [key.hash, key]));

  return async function authenticate(headers: Headers): Promise<Caller> {
    const presented = presentedKey(headers);
    if (!presented) {
      // The header's value is never echoed: it may be a key, only written wrong.
      const why = headers.get("authorization") ? "the Authorization header is not `Bearer <key>`" : "missing API key";
      throw new GatewayError("authentication", `${why}: send \`Authorization: Bearer <key>\` or \`x-api-key: <key>\``);
    }
    const hash = await hashKey(presented);
    if (adminKeyHash && constantTimeEqual(hash, adminKeyHash)) return { kind: "admin" };
    const key = byHash.get(hash);
    if (key && constantTimeEqual(hash, key.hash)) return { kind: "key", key };
    throw new GatewayError("authentication", "invalid API key: use a tollgate virtual key (`npx tollgate keys create` makes one)", {
      code: "invalid_api_key",
    });
  };
}

function presentedKey(headers: Headers): string | undefined {
  const authorization = headers.get("authorization");
  if (authorization) {
    const match = /^Bearer\s+(.+)$/i.exec(authorization.trim());
    if (match?.[1]) return match[1].trim();
  }
  return headers.get("x-api-key")?.trim() || undefined;
}

/** The caller's team; the admin key has none. */
export function teamOf(caller: Caller): string | undefined {
  return caller.kind === "key" ? caller.key.team : undefined;
}

/** Whether a caller may use a route: admin may use all; a key without `routes` may use all. */
export function mayUseRoute(caller: Caller, route: string): boolean {
  if (caller.kind === "admin") return true;
  return caller.key.routes === undefined || caller.key.routes.includes(route);
}
