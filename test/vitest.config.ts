import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    root: new URL("..", import.meta.url).pathname,
    include: ["test/**/*.test.ts"],
    exclude: ["test/bench/**", "node_modules/**"],
    globalSetup: ["test/globalSetup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Each file starts its own Redis servers; two cores, so two workers.
    maxWorkers: 2,
    reporters: ["default"],
  },
});
