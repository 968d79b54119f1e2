import { existsSync, readFileSync, statSync } from "node:fs"
import { basename, dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

/** The CLI package's version, written into the bundle by `scripts/bundle.mjs`; not defined when run from source. */
declare const __LATHE_VERSION__: string | undefined
/**
 * The short commit the bundle was built from (`git rev-parse --short HEAD` at build time, by `scripts/bundle.mjs`),
 * `null` when it was not built in a git checkout; not defined when run from source. Start-up never runs git.
 */
declare const __LATHE_COMMIT__: string | null | undefined

/** The folder of the `@lathe/cli` package this module belongs to (from `src/`, `dist/` or `dist/bundle/…`). */
const packageDir = (): string | undefined => {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (let up = 0; up < 4; up++) {
    try {
      const pkg: unknown = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"))
      if (typeof pkg === "object" && pkg !== null && "name" in pkg && pkg.name === "@lathe/cli") return dir
    } catch {
      // no package.json here; look one folder up
    }
    dir = dirname(dir)
  }
  return undefined
}

/**
 * The CLI's version: the one the bundle was built with (from packages/cli/package.json), or, run from source, the
 * package.json's. "unknown" when neither can be found.
 */
export const cliVersion = (): string => {
  if (typeof __LATHE_VERSION__ === "string") return __LATHE_VERSION__
  const dir = packageDir()
  if (dir === undefined) return "unknown"
  try {
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { readonly version?: unknown }
    return typeof pkg.version === "string" ? pkg.version : "unknown"
  } catch {
    return "unknown"
  }
}

/**
 * The commit `HEAD` names in the git directory of the work tree `root`, shortened to 7 digits, read from git's files
 * (a `.git` folder, or a `.git` file naming one, as in a worktree; loose refs, then `packed-refs`). `undefined` when
 * they do not say.
 */
const headCommit = (root: string): string | undefined => {
  try {
    let gitDir = join(root, ".git")
    if (statSync(gitDir).isFile()) {
      const named = /^gitdir:\s*(.+)$/m.exec(readFileSync(gitDir, "utf8"))?.[1]
      if (named === undefined) return undefined
      gitDir = resolve(root, named.trim())
    }
    const head = readFileSync(join(gitDir, "HEAD"), "utf8").trim()
    const ref = /^ref:\s*(\S+)$/.exec(head)?.[1]
    const common = existsSync(join(gitDir, "commondir"))
      ? resolve(gitDir, readFileSync(join(gitDir, "commondir"), "utf8").trim())
      : gitDir
    const loose = ref === undefined ? undefined : [gitDir, common].map((dir) => join(dir, ref)).find(existsSync)
    const commit =
      ref === undefined
        ? head
        : loose !== undefined
          ? readFileSync(loose, "utf8")
          : readFileSync(join(common, "packed-refs"), "utf8")
              .split("\n")
              .find((line) => line.endsWith(` ${ref}`))
    const sha = commit?.trim().slice(0, 40)
    return sha !== undefined && /^[0-9a-f]{40}$/.test(sha) ? sha.slice(0, 7) : undefined
  } catch {
    return undefined
  }
}

/**
 * The short commit of the checkout this CLI runs from (`packages/cli` of a git clone of the repository): the one the
 * bundle was built from, or, run from source, the one `HEAD` names. `undefined` when it was installed from a package
 * (then it has no checkout: a global `node_modules/@lathe/cli` inside some other repository is not one) or nothing
 * says. Never runs git.
 */
export const checkoutCommit = (): string | undefined => {
  const dir = packageDir()
  if (dir === undefined || basename(dirname(dir)) !== "packages") return undefined
  const root = dirname(dirname(dir))
  if (!existsSync(join(root, ".git"))) return undefined
  if (typeof __LATHE_COMMIT__ === "string") return __LATHE_COMMIT__
  return typeof __LATHE_COMMIT__ === "undefined" ? headCommit(root) : undefined
}

/** What `lathe --version` prints: the version, and the commit in parentheses when run from a checkout ("0.1.0 (a1b2c3d)"). */
export const versionLine = (): string => {
  const commit = checkoutCommit()
  return commit === undefined ? cliVersion() : `${cliVersion()} (${commit})`
}
