import { mergeConfig } from "vitest/config"
import { sharedConfig } from "../../vitest.shared.ts"

// One throwaway PostgreSQL server for the run (store-pg.e2e.test.ts); each test makes its own database in it.
// Two test files at a time: most of this package's time is end-to-end tests waiting on child processes (a model
// server, `lathe`, Postgres, bwrap), so a second worker overlaps those waits even on a 2-core machine (vitest's
// default there is one worker). Every e2e file is parallel-safe: its own temp folders, ports and databases.
export default mergeConfig(sharedConfig, {
  test: { globalSetup: ["../../scripts/test-postgres.mjs"], maxWorkers: 2 }
})
