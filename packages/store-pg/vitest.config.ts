import { mergeConfig } from "vitest/config"
import { sharedConfig } from "../../vitest.shared.ts"

// One throwaway PostgreSQL server for the run (or the one LATHE_TEST_PG_URL names); each test file makes its own database.
export default mergeConfig(sharedConfig, { test: { globalSetup: ["../../scripts/test-postgres.mjs"] } })
