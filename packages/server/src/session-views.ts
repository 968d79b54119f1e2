import { realpath } from "node:fs/promises"
import { inTree, Paths, SessionStore, Snapshot, sessionSummaries } from "@lathe/core"
import type { Session } from "@lathe/core/schema"
import type { SessionDiff, SessionSummaries } from "@lathe/sdk"
import { Effect } from "effect"
import { runIn, type ServerContext } from "./context.js"
import { type DirectoryApp, resolveDirectory } from "./directories.js"
import { apiError, apiErrorFailure } from "./errors.js"
import { patchFiles } from "./patch-stats.js"

/** The filters `GET /sessions` and `GET /sessions/summaries` share. */
export interface ListQuery {
  readonly directory?: string | undefined
  readonly tree?: string | undefined
  readonly allTrees?: "true" | "false" | undefined
}

/**
 * The top-level sessions `GET /sessions` shows, newest first: every session of the store, then those in scope (a
 * limit in the store could count sessions not shown), of this work tree unless asked for another's or every one's (a
 * directory asked for picks its own sessions, whatever their tree); the server's own clones always.
 */
export const listedSessions = async (ctx: ServerContext, query: ListQuery): Promise<ReadonlyArray<Session>> => {
  const resolved =
    query.directory === undefined
      ? undefined
      : await resolveDirectory(ctx.home.directory, query.directory).catch(() => undefined)
  if (resolved !== undefined) ctx.scope.check(resolved, `The directory ${JSON.stringify(query.directory)}`)
  const directory = resolved ?? query.directory
  const { all, root } = await runIn(
    ctx.home,
    Effect.gen(function* () {
      const all = yield* (yield* SessionStore).listSessions({ parentID: null })
      return { all, root: (yield* Paths).root }
    })
  )
  const tree =
    query.allTrees === "true" || (query.tree === undefined && directory !== undefined)
      ? undefined
      : query.tree === undefined
        ? root
        : await realpath(query.tree).catch(() => query.tree ?? root)
  const served = all.filter(
    (s) => ctx.listed(s) && (tree === undefined || s.workspace !== undefined || inTree(s, tree))
  )
  return directory === undefined ? served : served.filter((s) => s.directory === directory)
}

/** Sessions a page of `GET /sessions/summaries` holds at most. */
const MAX_PAGE = 200

/** One page of the listed sessions with their totals, from one store query for the page. */
export const summariesPage = async (
  ctx: ServerContext,
  query: ListQuery & { readonly limit?: number | undefined; readonly offset?: number | undefined }
): Promise<SessionSummaries> => {
  const listed = await listedSessions(ctx, query)
  const limit = Math.min(MAX_PAGE, Math.max(1, Math.floor(query.limit ?? 50)))
  const offset = Math.max(0, Math.floor(query.offset ?? 0))
  const page = listed.slice(offset, offset + limit)
  const summaries = await runIn(ctx.home, sessionSummaries(page.map((s) => s.id)))
  return {
    sessions: page.map((session, i) => {
      const { sessionID: _, ...summary } = summaries[i] ?? { sessionID: session.id, steps: 0, cost: 0, files: 0, ms: 0 }
      return { session: ctx.info(session), summary: { tokens: emptyTotals, ...summary } }
    }),
    total: listed.length,
    ...(offset + limit < listed.length ? { next: offset + limit } : {})
  }
}

const emptyTotals = { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } }

/**
 * The changes between two snapshots the session recorded (a step's `step-start`/`step-finish` snapshots, a patch's
 * hash): any other ref is refused, so a request never hands git a ref of its own making. Without `to`, to the work
 * tree now.
 */
export const rangeDiff = (app: DirectoryApp, sessionID: string, from: string, to: string | undefined) =>
  runIn(
    app,
    Effect.gen(function* () {
      const messages = yield* (yield* SessionStore).messages(sessionID)
      const recorded = new Set<string>()
      for (const part of messages.flatMap((m) => m.parts)) {
        if ((part.type === "step-start" || part.type === "step-finish") && part.snapshot) recorded.add(part.snapshot)
        else if (part.type === "patch") recorded.add(part.hash)
      }
      for (const ref of to === undefined ? [from] : [from, to])
        if (!recorded.has(ref))
          return yield* Effect.fail(
            apiErrorFailure(
              apiError.badRequest(
                `"${ref}" is not a snapshot session ${sessionID} recorded: name a step's snapshot (its step-start or step-finish part's "snapshot") or a patch part's "hash".`
              )
            )
          )
      const diff = yield* (yield* Snapshot).diff(from, to)
      return { diff, files: patchFiles(diff) } satisfies SessionDiff
    })
  )
