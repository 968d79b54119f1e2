// Rewrites docs/server-api.md from the API definition: `npm run docs:api` at the repository root.
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { apiReference } from "../src/reference.js"

const target = join(import.meta.dirname, "..", "..", "..", "docs", "server-api.md")
writeFileSync(target, apiReference())
process.stdout.write(`wrote ${target}\n`)
