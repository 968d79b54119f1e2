import type { CliIO } from "./io.js"

const LEVELS = ["debug", "info", "off"]

/**
 * Takes the global `--log-level <debug|info|off>` (or `--log-level=<level>`) out of `argv`, wherever it stands before
 * a `--`, and hands the command an `io` whose `LATHE_LOG` says it (the flag wins over the variable). An error text
 * when the level is missing or not one of them; a warning when `LATHE_LOG` holds something else.
 */
export const takeLogLevel = (
  argv: ReadonlyArray<string>,
  io: CliIO
): { readonly argv: ReadonlyArray<string>; readonly io: CliIO } | { readonly error: string } => {
  const end = argv.indexOf("--")
  const head = end === -1 ? argv : argv.slice(0, end)
  const at = head.findIndex((arg) => arg === "--log-level" || arg.startsWith("--log-level="))
  if (at === -1) {
    const value = io.env.LATHE_LOG?.trim().toLowerCase()
    if (value !== undefined && value !== "" && !LEVELS.includes(value))
      io.stderr(`lathe: LATHE_LOG=${io.env.LATHE_LOG} is not a log level (debug, info or off): logging stays off.\n`)
    return { argv, io }
  }
  const arg = head[at] ?? ""
  const inline = arg.includes("=")
  const level = inline ? arg.slice("--log-level=".length) : head[at + 1]
  if (level === undefined || !LEVELS.includes(level))
    return { error: `--log-level takes debug, info or off${level === undefined ? "" : `, not "${level}"`}.` }
  const rest = [...argv.slice(0, at), ...argv.slice(at + (inline ? 1 : 2))]
  return { argv: rest, io: { ...io, env: { ...io.env, LATHE_LOG: level } } }
}
