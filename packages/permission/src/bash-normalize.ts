/**
 * Normalising one simple command's argv for rules: wrappers are stripped (`bash-wrappers.ts`), program paths are
 * reduced to their basename and git's global options are dropped (`bash-git.ts`); this file renders the result.
 */
import type { Arg } from "./bash-word.js"

export { stripGitGlobals } from "./bash-git.js"
export type { Arg } from "./bash-word.js"
export { basename, type Unwrapped, unwrap } from "./bash-wrappers.js"

/** Tools whose second word names a subcommand: `always` offers `git push *` rather than `git *`. */
const SUBCOMMAND_TOOLS = new Set(
  (
    "git npm npx pnpm yarn bun deno cargo go docker podman kubectl helm gh pip pip3 uv poetry apt apt-get brew " +
    "systemctl nx make dotnet terraform gcloud aws az"
  ).split(" ")
)

const SAFE_WORD = /^[A-Za-z0-9_@%+=:,./~-]+$/

/** Renders argv as one shell-quoted line, the text rules match against (dynamic and glob words as written). */
export const renderArgv = (argv: ReadonlyArray<Arg>): string =>
  argv
    .map((arg) =>
      arg.dynamic || (arg.glob && !arg.placeholder) || SAFE_WORD.test(arg.value)
        ? arg.value
        : `'${arg.value.replaceAll("'", `'\\''`)}'`
    )
    .join(" ")

/** The `always` pattern offered for a command: `git push *` for subcommand tools, else `ls *`. */
export const alwaysPattern = (argv: ReadonlyArray<Arg>): string => {
  const [name, second] = argv
  if (!name) return "*"
  const sub = SUBCOMMAND_TOOLS.has(name.value) && second && !second.dynamic && /^[a-z][a-z0-9:_-]*$/.test(second.value)
  return sub ? `${renderArgv([name, second])} *` : `${renderArgv([name])} *`
}
