import { describe, expect, it } from "vitest";
import { createAuthenticator, mayUseRoute } from "./authenticate.ts";
import { constantTimeEqual, generateKey, hashKey } from "./key-hash.ts";

describe("virtual keys", () => {
  it("accepts a generated key by its sha256 hash, by Bearer or x-api-key, and rejects others", async () => {
    const key = generateKey();
    const admin = generateKey();
    expect(key).toMatch(/^tg_[A-Za-z0-9_-]{43}$/);
    const entry = { id: "app", team: "search", hash: await hashKey(key), routes: ["gpt"] };
    const authenticate = createAuthenticator([entry], await hashKey(admin));

    const byBearer = await authenticate(new Headers({ authorization: `Bearer ${key}` }));
    const byHeader = await authenticate(new Headers({ "x-api-key": key }));
    expect(byBearer).toEqual({ kind: "key", key: entry });
    expect(byHeader).toEqual({ kind: "key", key: entry });
    expect(await authenticate(new Headers({ authorization: `Bearer ${admin}` }))).toEqual({ kind: "admin" });
    await expect(authenticate(new Headers({ authorization: `Bearer ${key}x` }))).rejects.toMatchObject({ status: 401 });
    await expect(authenticate(new Headers())).rejects.toMatchObject({ status: 401 });

    expect(mayUseRoute(byBearer, "gpt")).toBe(true);
    expect(mayUseRoute(byBearer, "claude")).toBe(false);
    expect(mayUseRoute({ kind: "admin" }, "claude")).toBe(true);
  });

  it("tells a key sent without `Bearer ` from no key at all, without echoing the header", async () => {
    const key = generateKey();
    const authenticate = createAuthenticator([{ id: "app", team: "search", hash: await hashKey(key) }]);
    const unbearered = authenticate(new Headers({ authorization: key }));
    await expect(unbearered).rejects.toThrow("the Authorization header is not `Bearer <key>`: send `Authorization: Bearer <key>` or `x-api-key: <key>`");
    await expect(unbearered).rejects.not.toThrow(key);
    await expect(authenticate(new Headers())).rejects.toThrow(/^missing API key: send/);
  });

  it("hashes like sha256sum and compares without regard to where strings differ", async () => {
    expect(await hashKey("tollgate-dev-key")).toBe("sha256:" + (await import("node:crypto")).createHash("sha256").update("tollgate-dev-key").digest("hex"));
    expect(constantTimeEqual("abc", "abc")).toBe(true);
    expect(constantTimeEqual("abc", "abd")).toBe(false);
    expect(constantTimeEqual("abc", "abcd")).toBe(false);
  });
});
