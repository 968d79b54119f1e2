import { fileURLToPath } from "node:url"
import { startupMark } from "@lathe/core/startup-marks"
import { codeCacheDir, loadWithCodeCache } from "./code-cache.js"
import type { Command } from "./io.js"

/**
 * `lathe run` in the bundled CLI: the command from its own CommonJS build (`dist/bundle/run/run.cjs`, next to the
 * chunk this module lands in), loaded with a V8 code cache (see `loadWithCodeCache`). The bundle script puts this
 * module where `main.ts` imports `./commands/run.js`; from source, `main.ts` imports the command itself.
 */
export const runCommand: Command = async (args, io) => {
  startupMark("run build load")
  const build = loadWithCodeCache(fileURLToPath(new URL("./run/run.cjs", import.meta.url)), codeCacheDir(io.env))
  startupMark("run build evaluated")
  const command = build.exports.runCommand as Command
  const code = await command(args, io)
  // A finished turn compiled what a run needs; help text or a usage error would leave a cache of little use.
  if (code === 0 && !args.some((arg) => arg === "-h" || arg === "--help")) build.keepCache()
  return code
}
