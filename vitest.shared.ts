import { defineConfig } from "vitest/config"

/** The vitest config every package shares: tests run from source through the `@lathe/source` condition. */
export const sharedConfig = defineConfig({
  resolve: { conditions: ["@lathe/source"] },
  ssr: { resolve: { conditions: ["@lathe/source"] } },
  test: {
    include: ["test/**/*.test.ts"],
    passWithNoTests: true,
    testTimeout: 20_000
  }
})
