import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["__test__/**/*.test.ts"],
    // Child-process crash tests and 1 000-trial race tests need room; nothing here is timed.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Starts the run's PostgreSQL server (when a selected suite needs one and PRISM_TEST_POSTGRES_URL
    // is unset) and stops every server of the run at its end.
    globalSetup: ["__test__/helpers/postgres-global.ts"],
  },
});
