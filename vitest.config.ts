import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "adapters/**/*.test.ts", "policies/**/*.test.ts", "test/**/*.test.ts"],
    // Real servers (redis-server, llama-server) start per file; give them room on 2-core machines.
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: "forks",
  },
});
