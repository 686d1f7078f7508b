import { describe, expect, it } from "vitest";
import { startMockProviders } from "./support/msw/index.ts";
import { LIMITED_KEY, sha256, startTestGateway, testConfig } from "./support/gateway.ts";

// A config whose admin.keyHash is a virtual key's hash is refused at start-up, naming
// admin.keyHash and the key.
// Was: only two keys sharing a hash were refused; the authenticator checks the admin hash first,
// so that app key silently became the admin key (every route, no budget, every tenant's scopes).

describe("admin.keyHash", () => {
  it("may not be the hash of a virtual key (or that key would be admin)", async () => {
    const mocks = startMockProviders();
    const config = { ...testConfig(), admin: { keyHash: sha256(LIMITED_KEY) } };
    try {
      const started = startTestGateway(config);
      await expect(started).rejects.toThrow(/admin\.keyHash: this is also the hash of key "limited", which would make that key the admin key/);
      await started.then((gateway) => gateway.close()).catch(() => undefined);
    } finally {
      mocks.close();
    }
  });
});
