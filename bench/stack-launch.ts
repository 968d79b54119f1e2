/**
 * Starts `bench/stack-agent.ts`'s bundle (`stack-agent.cjs` beside this file's bundle) as `lathe run` starts its run
 * build: through the CLI's `loadWithCodeCache`, with the code cache in `LATHE_CODE_CACHE`, kept after a run that ended
 * well. Built by `buildStackAgent` (`bench/stack-build.ts`).
 */
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { loadWithCodeCache } from "../packages/cli/src/code-cache.js"

const build = loadWithCodeCache(
  join(dirname(fileURLToPath(import.meta.url)), "stack-agent.cjs"),
  process.env.LATHE_CODE_CACHE
)
await (build.exports.main as () => Promise<void>)()
build.keepCache()
