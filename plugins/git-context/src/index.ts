/**
 * @lathe/git-context: tells the model where it stands in git. Each step's system prompt ends with a
 * `<git-context>` block (branch, upstream ahead/behind, dirty files), and such blocks are kept out of the history
 * sent to the model.
 *
 * ```json
 * { "plugin": ["@lathe/git-context"] }
 * ```
 */
import { definePlugin, type MessageWithParts, type Plugin } from "@lathe/plugin"
import { readGitStatus } from "./git-status.js"
import { isGitContextBlock, renderGitContext } from "./render.js"

export { type DirtyFile, type GitStatus, parseStatus, readGitStatus } from "./git-status.js"
export { isGitContextBlock, MAX_DIRTY_FILES, renderGitContext, TAG } from "./render.js"

/** How long a computed block is reused before git is asked again. */
export const REFRESH_MS = 5_000
/** How long `git status` may take before the step goes on without the block. */
export const GIT_TIMEOUT_MS = 3_000

/** What the plugin runs with; injectable for tests. */
export interface GitContextDependencies {
  /** The current time in epoch milliseconds (default `Date.now`). */
  readonly now?: () => number
  /** Reuse a block for this long (default {@link REFRESH_MS}). */
  readonly refreshMs?: number
  /** Time limit of `git status` (default {@link GIT_TIMEOUT_MS}). */
  readonly timeoutMs?: number
}

/**
 * `messages` without any text part that is exactly a `<git-context>` block; a message left with no part is
 * dropped. Returns new message objects where something was removed and never changes the ones given, so what
 * the store holds stays as it was.
 */
export const withoutGitContext = (messages: ReadonlyArray<MessageWithParts>): Array<MessageWithParts> =>
  messages.flatMap((message) => {
    const parts = message.parts.filter((part) => !(part.type === "text" && isGitContextBlock(part.text)))
    if (parts.length === message.parts.length) return [message]
    return parts.length === 0 ? [] : [{ ...message, parts }]
  })

/**
 * Builds the plugin; the default export is `createGitContextPlugin()`. `system.transform` appends the block for
 * the project root (computed at most once per `refreshMs`; concurrent steps share one `git status`), or nothing
 * outside a git work tree or when git fails or times out. `messages.transform` filters old blocks out of the
 * history sent to the model.
 */
export const createGitContextPlugin = (dependencies: GitContextDependencies = {}): Plugin =>
  definePlugin({
    name: "@lathe/git-context",
    setup: (ctx) => {
      const now = dependencies.now ?? Date.now
      const refreshMs = dependencies.refreshMs ?? REFRESH_MS
      const timeoutMs = dependencies.timeoutMs ?? GIT_TIMEOUT_MS
      let cached: { readonly at: number; readonly block: string | undefined } | undefined
      let pending: Promise<string | undefined> | undefined

      const current = (): Promise<string | undefined> => {
        const at = now()
        if (cached !== undefined && at - cached.at < refreshMs) return Promise.resolve(cached.block)
        pending ??= readGitStatus(ctx.git, ctx.root, timeoutMs).then((status) => {
          const block = status === undefined ? undefined : renderGitContext(status)
          cached = { at, block }
          pending = undefined
          return block
        })
        return pending
      }

      return {
        "system.transform": async (_input, output) => {
          const block = await current()
          if (block !== undefined) output.system.push(block)
        },
        "messages.transform": async (_input, output) => {
          output.messages = withoutGitContext(output.messages)
        }
      }
    }
  })

/** The plugin, on the real clock. */
export default createGitContextPlugin()
