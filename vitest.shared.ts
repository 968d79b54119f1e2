import { defineConfig } from "vitest/config"

/**
 * The vitest config every package shares: tests run from source through the `@lathe/source` condition.
 *
 * V8 coverage is on when LATHE_COVERAGE=1 (scripts/test sets it; so does `--coverage` on the command line). It
 * counts the package's own `src/` as run in the test process; the e2e tests that spawn the built CLI add nothing.
 * The json-summary report (coverage/coverage-summary.json) is what scripts/coverage.mjs reads for its table and
 * thresholds; it is written even when a test fails, so the table still shows what ran.
 */
export const sharedConfig = defineConfig({
  resolve: { conditions: ["@lathe/source"] },
  ssr: { resolve: { conditions: ["@lathe/source"] } },
  test: {
    include: ["test/**/*.test.ts"],
    passWithNoTests: true,
    // End-to-end tests start the CLI from source several times each (~2–3 s a start on a slow 2-core machine): on
    // such a machine (CI's clone on 2026-11-30, ~3.5× slower than usual) six of them ran past 20 s. A test that
    // hangs still fails, later.
    testTimeout: 60_000,
    coverage: {
      provider: "v8",
      enabled: process.env.LATHE_COVERAGE === "1",
      include: ["src/**/*.{ts,tsx}"],
      exclude: ["src/**/*.d.ts", "src/**/*.test.ts"],
      reporter: ["json-summary"],
      reportOnFailure: true
    }
  }
})
