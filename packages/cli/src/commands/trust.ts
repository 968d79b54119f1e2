import { parseArgs } from "node:util"
import { isTrusted, Paths, trustProject } from "@lathe/core"
import { Effect } from "effect"
import type { CliIO, Command } from "../io.js"

const usage = `Usage: lathe trust [--check]

Marks this directory's project as trusted, so its lathe.json may widen what Lathe does (allow rules,
plugins, provider URLs and keys). Until then a project's config can only narrow it. The list of trusted
folders is kept in the data dir (trust.json).

Options:
  --check  Only say whether the project is trusted (exit 0 if trusted, 1 if not)
`

/** `lathe trust`: trust the current project's config. */
export const trustCommand: Command = async (args, io: CliIO) => {
  const { values } = parseArgs({
    args: [...args],
    options: { check: { type: "boolean" }, help: { type: "boolean", short: "h" } },
    strict: true
  })
  if (values.help) {
    io.stdout(usage)
    return 0
  }
  const program = Effect.gen(function* () {
    const paths = yield* Paths
    const trusted = yield* isTrusted(paths)
    if (values.check) return { paths, trusted, changed: false }
    if (!trusted) yield* trustProject(paths)
    return { paths, trusted: true, changed: !trusted }
  }).pipe(Effect.provide(Paths.layer(io.cwd, io.env)))
  const result = await Effect.runPromise(Effect.result(program))
  if (result._tag === "Failure") {
    io.stderr(`lathe trust: ${result.failure.message}\n`)
    return 1
  }
  const { paths, trusted, changed } = result.success
  if (values.check) {
    io.stdout(`${paths.root} is ${trusted ? "trusted" : "not trusted"}\n`)
    return trusted ? 0 : 1
  }
  io.stdout(
    changed ? `Trusted ${paths.root}. Its config now applies in full.\n` : `${paths.root} was already trusted.\n`
  )
  return 0
}
