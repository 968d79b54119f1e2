/**
 * Where a write really lands: paths resolved as the kernel resolves them, through symlinks, including paths
 * whose tail does not exist yet (the real path of the deepest existing ancestor, then the rest).
 */
import { globSync, lstatSync, readlinkSync, realpathSync } from "node:fs"
import { posix } from "node:path"

/** The most files a glob in a written path may match before the write is treated as unknown. */
export const MAX_GLOB_MATCHES = 1000

const MAX_LINKS = 40

/** One component: its real path, and whether it exists (a dangling symlink is followed to where it points). */
const step = (path: string, links: number): { readonly path: string; readonly existing: boolean } => {
  try {
    if (!lstatSync(path).isSymbolicLink()) return { path, existing: true }
  } catch {
    return { path, existing: false }
  }
  try {
    return { path: realpathSync(path), existing: true }
  } catch {
    if (links >= MAX_LINKS) return { path, existing: false }
    const link = readlinkSync(path)
    return {
      path: resolveFrom(link.startsWith("/") ? link : `${posix.dirname(path)}/${link}`, links + 1),
      existing: false
    }
  }
}

const resolveFrom = (absolute: string, links: number): string => {
  let current = "/"
  let existing = true
  for (const segment of absolute.split("/")) {
    if (segment === "" || segment === ".") continue
    if (segment === "..") {
      current = posix.dirname(current)
      continue
    }
    const next = current === "/" ? `/${segment}` : `${current}/${segment}`
    if (!existing) {
      current = next
      continue
    }
    const resolved = step(next, links)
    current = resolved.path
    existing = resolved.existing
  }
  return current
}

/**
 * The real path of an absolute path, component by component: a symlink is replaced by its target's real path
 * (so `link/../x` is the target's parent's `x`, as the kernel sees it, not `./x`), `..` goes to the parent of the
 * real path so far, and once a component does not exist the rest is appended as written. A dangling symlink
 * counts as pointing where its target would be.
 */
export const realPath = (absolute: string): string => resolveFrom(absolute, 0)

/** Whether `path` is `root` or under it (a sibling that merely starts with root's name is outside). */
export const inside = (root: string, path: string): boolean =>
  path === root || path.startsWith(root.endsWith("/") ? root : `${root}/`)

/**
 * The real paths a written glob may touch: the folder the pattern starts in and every current match, or
 * undefined past `MAX_GLOB_MATCHES` matches. With no match the shell passes the pattern on, which is covered by
 * its folder.
 */
export const expandGlobWrite = (absolute: string): Array<string> | undefined => {
  const segments = absolute.split("/")
  const first = segments.findIndex((segment) => /[*?[]/.test(segment))
  const base = first <= 0 ? "/" : segments.slice(0, first).join("/") || "/"
  const paths = [realPath(base)]
  let matches: Array<string>
  try {
    matches = globSync(absolute)
  } catch {
    matches = []
  }
  if (matches.length > MAX_GLOB_MATCHES) return undefined
  for (const match of matches) paths.push(realPath(match))
  return [...new Set(paths)]
}
