#!/usr/bin/env node
// The `lathe` executable. Kept tiny: the compile cache makes the second start fast, and commands load lazily.
import module from "node:module"
import { prefetchStartupGit } from "@lathe/core/git-prefetch"

module.enableCompileCache?.()
const argv = process.argv.slice(2)
// `lathe run` and the interactive session work on this directory: the git questions of start-up (project root and
// id, branch and changes) go to git processes now and are answered while this process loads its modules.
if (runsAgentHere(argv)) prefetchStartupGit(process.cwd())
const { main } = await import("./main.js")
process.exitCode = await main(argv, {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  cwd: process.cwd(),
  isTTY: Boolean(process.stdout.isTTY),
  stdin: process.stdin,
  stdinIsTTY: Boolean(process.stdin.isTTY),
  onInterrupt: (handler) => {
    process.on("SIGINT", handler)
    process.on("SIGTERM", handler)
    return () => {
      process.off("SIGINT", handler)
      process.off("SIGTERM", handler)
    }
  }
})

/** Whether `argv` starts the agent on this directory: `lathe run …` or the interactive session, not attached to a server. */
function runsAgentHere(args: ReadonlyArray<string>): boolean {
  const [first] = args
  const command =
    first === undefined || first === "run" || (first.startsWith("-") && !/^-(h|v|-help|-version)$/.test(first))
  return command && !args.some((arg) => arg === "--attach" || arg.startsWith("--attach="))
}
