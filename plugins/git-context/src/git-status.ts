import type { PluginContext } from "@lathe/plugin"

/** A file git reports as changed, staged, unmerged or untracked. */
export interface DirtyFile {
  /** Short status: `M`, `A`, `D`, `R`, `MM`…, `UU` for a conflict, `??` for untracked. */
  readonly status: string
  /** Path relative to the repository root, `/`-separated. */
  readonly path: string
}

/** The state of a work tree, as `git status --porcelain=v2 --branch` reports it. */
export interface GitStatus {
  /** The checked-out branch; `undefined` on a detached HEAD. */
  readonly branch: string | undefined
  /** The current commit, abbreviated; `undefined` before the first commit. */
  readonly commit: string | undefined
  /**
   * The branch's upstream, when it has one, and how many commits the branch is ahead of and behind it; the counts
   * are absent when the upstream branch no longer exists.
   */
  readonly upstream: { readonly name: string; readonly ahead?: number; readonly behind?: number } | undefined
  /** Every dirty file, in git's order. */
  readonly dirty: ReadonlyArray<DirtyFile>
}

/** Where the path starts in each porcelain v2 record kind (the number of space-separated fields before it). */
const PATH_FIELD: Readonly<Record<string, number>> = { "1": 8, "2": 9, u: 10, "?": 1 }

/** The nth space-separated field and everything after it (paths may contain spaces). */
const fromField = (record: string, n: number): string => record.split(" ").slice(n).join(" ")

/** `XY` without the `.` git writes for "unchanged". */
const shortStatus = (xy: string): string => xy.replaceAll(".", "") || xy

/**
 * Parses `git status --porcelain=v2 --branch -z` output. Unknown record kinds are ignored, so newer git versions
 * that add records still parse.
 */
export const parseStatus = (output: string): GitStatus => {
  const records = output.split("\0")
  let branch: string | undefined
  let commit: string | undefined
  let upstreamName: string | undefined
  let counts: { ahead: number; behind: number } | undefined
  const dirty: Array<DirtyFile> = []
  for (let index = 0; index < records.length; index++) {
    const record = records[index] ?? ""
    if (record.startsWith("# branch.oid ")) {
      const oid = record.slice("# branch.oid ".length)
      commit = oid === "(initial)" ? undefined : oid.slice(0, 7)
    } else if (record.startsWith("# branch.head ")) {
      const head = record.slice("# branch.head ".length)
      branch = head === "(detached)" ? undefined : head
    } else if (record.startsWith("# branch.upstream ")) upstreamName = record.slice("# branch.upstream ".length)
    else if (record.startsWith("# branch.ab ")) {
      const match = /^# branch\.ab \+(\d+) -(\d+)$/.exec(record)
      if (match) counts = { ahead: Number(match[1]), behind: Number(match[2]) }
    } else {
      const kind = record.slice(0, record.indexOf(" "))
      const field = PATH_FIELD[kind]
      if (field === undefined) continue
      dirty.push({
        status: kind === "?" ? "??" : shortStatus(record.split(" ")[1] ?? ""),
        path: fromField(record, field)
      })
      if (kind === "2") index++ // a rename's original path follows as its own record
    }
  }
  return {
    branch,
    commit,
    upstream: upstreamName === undefined ? undefined : { name: upstreamName, ...counts },
    dirty
  }
}

/**
 * Runs `git status` in `root` (the project root, named as git's work tree) and parses it; `undefined` when `root` is not inside a git work tree, git is not
 * installed, the repository's config cannot be made safe, or it does not answer within `timeoutMs` (then git is
 * killed as a process group). Never rejects. Run through the host's `ctx.git`, hardened as every Lathe git call: no
 * program the repository's config names runs (fsmonitor, filters, hooks…), no `GIT_*` variable of this process's
 * environment points it at another repository; submodules are not looked into. Takes no optional locks, so it never
 * blocks a git command the person runs at the same time.
 */
export const readGitStatus = async (
  git: PluginContext["git"],
  root: string,
  timeoutMs: number
): Promise<GitStatus | undefined> => {
  const result = await git(
    [
      "--no-optional-locks",
      "status",
      "--porcelain=v2",
      "--branch",
      "-z",
      "--untracked-files=normal",
      "--ignore-submodules=all"
    ],
    // The root is the folder holding the `.git` entry (Paths): named as the work tree, so a `core.worktree` (or
    // `core.bare`) in the repository's config does not make git report on another folder, `/` included.
    { cwd: root, timeoutMs, env: { LC_ALL: "C" }, global: ["--work-tree", root] }
  ).catch(() => undefined)
  if (result === undefined || result.timedOut || result.exitCode !== 0) return undefined
  return parseStatus(result.stdout)
}
