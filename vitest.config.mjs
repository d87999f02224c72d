import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["__test__/**/*.test.ts"],
    // Child-process crash tests and 1 000-trial race tests need room; nothing here is timed.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
  },
});
