import { statSync } from "node:fs"
import { resolve } from "node:path"
import { isTrusted, Paths, type PathsShape, trustedFolders, trustProject, untrustProject } from "@lathe/core"
import { Effect } from "effect"
import { defineCommand, helpText, parseCommand } from "../command-kit.js"
import type { CliIO, Command } from "../io.js"

/** `lathe trust`, declared once for the command kit. */
export const trustSpec = defineCommand({
  name: "trust",
  usage: ["[dir] [--check]", "--list"],
  description: `Marks a project as trusted, so its lathe.json and .lathe/ may widen what Lathe does (allow rules,
plugins, agents, provider URLs, headers and keys, {env:} and {file:} values). Until then a project's
config can only narrow it: deny and ask rules apply, the rest is ignored with a notice.

The project is the git work tree holding [dir] (default: the current directory), else [dir] itself.
Trust is kept per real path (symlinks resolved) in the data dir (trust.json); trusting a folder
trusts every project inside it. Undo it with \`lathe untrust [dir]\`. A "no" answered to the
interactive UI's trust prompt is kept there too (the UI then does not ask again in that folder);
\`lathe trust\` forgets it.`,
  options: {
    check: { type: "boolean", description: "Only say whether the project is trusted (exit 0 if trusted, 1 if not)" },
    list: { type: "boolean", description: "List the trusted folders" }
  },
  positionals: { name: "[dir]" }
})

/** `lathe untrust`, declared once for the command kit. */
export const untrustSpec = defineCommand({
  name: "untrust",
  usage: ["[dir]"],
  description: `Removes a project (the git work tree holding [dir], default the current directory) from the trusted
folders: from the next start its config may again only narrow what Lathe does. A folder trusted above
it keeps it trusted; the command names that folder.`,
  positionals: { name: "[dir]" }
})

/** The folder a `[dir]` argument names, checked to exist (a message for the person when it does not). */
const folderOf = (io: CliIO, dir: string | undefined): string | Error => {
  const folder = resolve(io.cwd, dir ?? ".")
  try {
    if (statSync(folder).isDirectory()) return folder
    return new Error(`${folder} is not a folder; give the project's folder.`)
  } catch {
    return new Error(`${folder} does not exist; give the project's folder.`)
  }
}

/** Runs `use` with the `Paths` of `folder`; a failure is printed as `lathe <name>: <message>` (exit 1). */
const withPaths = async <A>(
  name: string,
  io: CliIO,
  folder: string,
  use: (paths: PathsShape) => Effect.Effect<A, { readonly message: string }>
): Promise<{ readonly ok: true; readonly value: A } | { readonly ok: false }> => {
  const program = Effect.gen(function* () {
    return yield* use(yield* Paths)
  }).pipe(Effect.provide(Paths.layer(folder, io.env)))
  const result = await Effect.runPromise(Effect.result(program))
  if (result._tag === "Success") return { ok: true, value: result.success }
  io.stderr(`lathe ${name}: ${result.failure.message}\n`)
  return { ok: false }
}

/** `lathe trust [dir] [--check] | --list`: trust a project's config, say whether it is trusted, or list trust. */
export const trustCommand: Command = async (args, io: CliIO) => {
  const parsed = parseCommand(trustSpec, args, io)
  if (typeof parsed === "number") return parsed
  const { values, positionals } = parsed
  if (positionals.length > 1 || (values.list && (positionals.length > 0 || values.check))) {
    io.stderr(`lathe trust: expected at most one folder, or --list alone\n\n${helpText(trustSpec)}`)
    return 2
  }
  const folder = folderOf(io, positionals[0])
  if (folder instanceof Error) {
    io.stderr(`lathe trust: ${folder.message}\n`)
    return 1
  }
  if (values.list) {
    const listed = await withPaths("trust", io, folder, (paths) => trustedFolders(paths))
    if (!listed.ok) return 1
    io.stdout(listed.value.length === 0 ? "No folder is trusted.\n" : `${listed.value.join("\n")}\n`)
    return 0
  }
  const result = await withPaths("trust", io, folder, (paths) =>
    Effect.gen(function* () {
      const trusted = yield* isTrusted(paths)
      if (!trusted && !values.check) yield* trustProject(paths)
      return { root: paths.root, trusted }
    })
  )
  if (!result.ok) return 1
  const { root, trusted } = result.value
  if (values.check) {
    io.stdout(`${root} is ${trusted ? "trusted" : "not trusted"}\n`)
    return trusted ? 0 : 1
  }
  io.stdout(trusted ? `${root} was already trusted.\n` : `Trusted ${root}. Its config now applies in full.\n`)
  return 0
}

/** `lathe untrust [dir]`: take a project's trust back, so its config may only narrow again. */
export const untrustCommand: Command = async (args, io: CliIO) => {
  const parsed = parseCommand(untrustSpec, args, io)
  if (typeof parsed === "number") return parsed
  if (parsed.positionals.length > 1) {
    io.stderr(`lathe untrust: expected at most one folder\n\n${helpText(untrustSpec)}`)
    return 2
  }
  const folder = folderOf(io, parsed.positionals[0])
  if (folder instanceof Error) {
    io.stderr(`lathe untrust: ${folder.message}\n`)
    return 1
  }
  const result = await withPaths("untrust", io, folder, (paths) =>
    Effect.map(untrustProject(paths), (outcome) => ({ root: paths.root, ...outcome }))
  )
  if (!result.ok) return 1
  const { root, removed, coveredBy } = result.value
  if (coveredBy.length > 0) {
    io.stdout(
      `${removed ? `Removed ${root} from the trusted folders, but it` : `${root}`} is still trusted through ` +
        `${coveredBy.join(", ")}. Run \`lathe untrust ${coveredBy[0]}\` to take that back.\n`
    )
    return 0
  }
  io.stdout(
    removed
      ? `${root} is no longer trusted. Its config may only narrow what Lathe does.\n`
      : `${root} was not trusted.\n`
  )
  return 0
}
