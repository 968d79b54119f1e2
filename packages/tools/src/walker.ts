import { readdir, readFile } from "node:fs/promises"
import { join, relative, sep } from "node:path"
import ignore, { type Ignore } from "ignore"
import picomatch from "picomatch"

/** A `.gitignore` and the folder it applies from. */
interface Rules {
  readonly base: string
  readonly ignore: Ignore
}

const toPosix = (path: string): string => (sep === "/" ? path : path.split(sep).join("/"))

const ignored = (rules: ReadonlyArray<Rules>, path: string, directory: boolean): boolean =>
  rules.some((r) => {
    const rel = toPosix(relative(r.base, path))
    return rel !== "" && !rel.startsWith("..") && r.ignore.ignores(directory ? `${rel}/` : rel)
  })

/**
 * Every file under `root` (paths relative to it, `/`-separated), the way `rg --files --hidden` lists them
 * when rg is not available: `.git` is skipped and every `.gitignore` on the way applies to its subtree.
 * Symlinks are not followed. Stops early when `signal` aborts.
 */
export async function* walkFiles(root: string, signal?: AbortSignal): AsyncGenerator<string> {
  const stack: Array<{ readonly dir: string; readonly rules: ReadonlyArray<Rules> }> = [{ dir: root, rules: [] }]
  while (stack.length > 0) {
    if (signal?.aborted) return
    const { dir, rules: inherited } = stack.pop() ?? { dir: root, rules: [] }
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => [])
    let rules = inherited
    if (entries.some((e) => e.name === ".gitignore" && e.isFile())) {
      const text = await readFile(join(dir, ".gitignore"), "utf8").catch(() => "")
      rules = [...inherited, { base: dir, ignore: ignore().add(text) }]
    }
    const subdirs: Array<string> = []
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) {
        if (entry.name !== ".git" && !ignored(rules, path, true)) subdirs.push(path)
      } else if (entry.isFile() && !ignored(rules, path, false)) {
        yield toPosix(relative(root, path))
      }
    }
    for (const sub of subdirs.reverse()) stack.push({ dir: sub, rules })
  }
}

/**
 * A matcher with ripgrep's `--glob` meaning: a pattern without `/` matches a file's name at any depth;
 * one with `/` matches the path relative to the search root. Dotfiles match.
 */
export const globMatcher = (pattern: string): ((relativePath: string) => boolean) => {
  const match = picomatch(pattern, { dot: true, basename: !pattern.includes("/") })
  return (path) => match(path)
}
