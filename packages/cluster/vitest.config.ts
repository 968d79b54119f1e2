import { mergeConfig } from "vitest/config"
import { sharedConfig } from "../../vitest.shared.ts"

// The tests need a real Postgres: one throwaway server per run (scripts/test-postgres.mjs), a database per test file.
export default mergeConfig(sharedConfig, { test: { globalSetup: ["../../scripts/test-postgres.mjs"] } })
