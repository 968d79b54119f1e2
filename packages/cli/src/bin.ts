#!/usr/bin/env node
// The `lathe` executable. Kept tiny: the compile cache makes the second start fast, and commands load lazily.
import module from "node:module"

module.enableCompileCache?.()
const { main } = await import("./main.js")
process.exitCode = await main(process.argv.slice(2), {
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
