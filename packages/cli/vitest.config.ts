import { mergeConfig } from "vitest/config"
import { sharedConfig } from "../../vitest.shared.ts"

// One throwaway PostgreSQL server for the run (store-pg.e2e.test.ts); each test makes its own database in it.
export default mergeConfig(sharedConfig, { test: { globalSetup: ["../../scripts/test-postgres.mjs"] } })
