import { execFileSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { basename, dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

/** The CLI package's version, written into the bundle by `scripts/bundle.mjs`; not defined when run from source. */
declare const __LATHE_VERSION__: string | undefined

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
 * The short commit of the checkout this CLI runs from (`packages/cli` of a git clone of the repository), or
 * undefined when it was installed from a package (then it has no checkout: a global `node_modules/@lathe/cli` inside
 * some other repository is not one) or git cannot say.
 */
export const checkoutCommit = (): string | undefined => {
  const dir = packageDir()
  if (dir === undefined || basename(dirname(dir)) !== "packages") return undefined
  const root = dirname(dirname(dir))
  if (!existsSync(join(root, ".git"))) return undefined
  try {
    const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
      timeout: 3000
    }).trim()
    return /^[0-9a-f]{4,40}$/.test(commit) ? commit : undefined
  } catch {
    return undefined
  }
}

/** What `lathe --version` prints: the version, and the commit in parentheses when run from a checkout ("0.1.0 (a1b2c3d)"). */
export const versionLine = (): string => {
  const commit = checkoutCommit()
  return commit === undefined ? cliVersion() : `${cliVersion()} (${commit})`
}
