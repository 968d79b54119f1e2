import type { GitStatus } from "./git-status.js"

/** How many dirty files the block lists before it only counts the rest. */
export const MAX_DIRTY_FILES = 50

/** The tag that wraps the block in the system prompt. */
export const TAG = "git-context"

const BLOCK = new RegExp(`^\\s*<${TAG}>[\\s\\S]*</${TAG}>\\s*$`)

/** Whether `text` is exactly one `<git-context>` block (surrounding whitespace allowed). */
export const isGitContextBlock = (text: string): boolean => BLOCK.test(text)

/**
 * The `<git-context>` block for the system prompt: the branch (or detached commit), its upstream with ahead/behind
 * counts, and the dirty files with their short status, at most `maxFiles` of them followed by a count of the rest.
 */
export const renderGitContext = (status: GitStatus, maxFiles = MAX_DIRTY_FILES): string => {
  const head =
    status.branch !== undefined
      ? `Branch: ${status.branch}`
      : `Detached HEAD${status.commit === undefined ? "" : ` at ${status.commit}`}`
  const { upstream: tracked } = status
  const upstream =
    tracked === undefined
      ? "Upstream: none"
      : tracked.ahead === undefined || tracked.behind === undefined
        ? `Upstream: ${tracked.name} (gone)`
        : `Upstream: ${tracked.name} (${tracked.ahead} ahead, ${tracked.behind} behind)`
  const listed = status.dirty.slice(0, maxFiles).map((file) => `${file.status.padEnd(2)} ${file.path}`)
  const rest = status.dirty.length - listed.length
  const files =
    status.dirty.length === 0
      ? ["Working tree clean."]
      : [
          `Uncommitted changes (${status.dirty.length} file${status.dirty.length === 1 ? "" : "s"}):`,
          ...listed,
          ...(rest > 0 ? [`…and ${rest} more`] : [])
        ]
  return [`<${TAG}>`, head, upstream, ...files, `</${TAG}>`].join("\n")
}
