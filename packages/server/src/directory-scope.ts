import { realpath, stat } from "node:fs/promises"
import { resolve, sep } from "node:path"

/** A request names a directory (or a session of one) outside the directories this server serves. */
export class OutsideDirectory extends Error {
  readonly _tag = "OutsideDirectory"
}

/** An `--allow-directory` that does not exist or is not a directory. */
export class BadAllowedDirectory extends Error {
  readonly _tag = "BadAllowedDirectory"
}

const within = (root: string, directory: string): boolean =>
  directory === root || directory.startsWith(root.endsWith(sep) ? root : `${root}${sep}`)

/**
 * The directories a server's requests may name: its own directory and the folders below it, plus each directory
 * allowed with `--allow-directory` and the folders below those. Contract: every path is compared as a real path
 * (symlinks resolved, `..` folded), so a symlink inside the served directory that leads out of it is outside, and
 * a directory is in scope only when its real path is one of the roots or below one.
 */
export class DirectoryScope {
  private constructor(
    /** Real paths: the server's directory first, then the allowed ones. */
    readonly roots: ReadonlyArray<string>
  ) {}

  /**
   * The scope of a server whose real directory is `home`; each of `allowed` (absolute, or relative to `home`) must be
   * an existing directory, else {@link BadAllowedDirectory}.
   */
  static async make(home: string, allowed: ReadonlyArray<string> = []): Promise<DirectoryScope> {
    const roots = [home]
    for (const given of allowed) {
      const absolute = resolve(home, given)
      const info = await stat(absolute).catch(() => undefined)
      if (!info?.isDirectory())
        throw new BadAllowedDirectory(
          `--allow-directory ${given}: ${info ? "is not a directory" : "no such directory"} (resolved to ` +
            `${absolute}). Name an existing directory.`
        )
      roots.push(await realpath(absolute))
    }
    return new DirectoryScope(roots)
  }

  /** Whether a real path is a served directory or below one. */
  allows(directory: string): boolean {
    return this.roots.some((root) => within(root, directory))
  }

  /**
   * Throws {@link OutsideDirectory} unless the real path `directory` is in scope; `what` names it in the message
   * (`The directory "x"`, `Session ses_1's directory`).
   */
  check(directory: string, what: string): void {
    if (this.allows(directory)) return
    const home = this.roots[0] ?? ""
    throw new OutsideDirectory(
      `${what} (${directory}) is outside the directories this server serves: ${home} and the folders below it` +
        `${this.roots.length > 1 ? `, and ${this.roots.slice(1).join(", ")}` : ""} (symlinks are followed to where ` +
        `they lead). To let clients use it, restart the server with --allow-directory ${directory}.`
    )
  }
}
