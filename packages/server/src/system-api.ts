import { Config, PermissionNext, Plugins, Question, resolveAgents } from "@lathe/core"
import { LatheApi, type PendingPermission, type PendingQuestion } from "@lathe/sdk"
import { Effect } from "effect"
import { HttpApiBuilder, OpenApi } from "effect/http-api"
import { runIn, type ServerContext } from "./context.js"
import type { DirectoryApp } from "./directories.js"
import { apiError, apiErrorFailure, attempt } from "./errors.js"

/** The `system` group: health, the OpenAPI document, the agents a prompt can name. */
export const systemApi = (ctx: ServerContext) =>
  HttpApiBuilder.group(LatheApi, "system", (handlers) =>
    handlers
      .handle("health", () => Effect.succeed({ ok: true as const, version: ctx.version }))
      .handle("openapi", () => Effect.sync(() => ({ ...OpenApi.fromApi(LatheApi) })))
      .handle("agents", () =>
        attempt(
          () =>
            runIn(
              ctx.home,
              Effect.gen(function* () {
                const plugins = yield* Plugins
                const config = yield* Config
                return [...resolveAgents(plugins.agents, config.info.agent).values()]
                  .filter((agent) => !agent.hidden)
                  .map((agent) => ({
                    name: agent.name,
                    mode: agent.mode,
                    ...(agent.description ? { description: agent.description } : {})
                  }))
              })
            ),
          []
        )
      )
  )

/** Which app holds a pending ask or question with `id`, by listing each app's pending ones. */
const findHolder = async <T extends { readonly id: string }>(
  ctx: ServerContext,
  list: (app: DirectoryApp) => Promise<ReadonlyArray<T>>,
  id: string
): Promise<DirectoryApp | undefined> => {
  for (const app of await ctx.directories.all()) if ((await list(app)).some((item) => item.id === id)) return app
  return undefined
}

const pendingAsks = (app: DirectoryApp) =>
  runIn(
    app,
    Effect.flatMap(PermissionNext, (p) => p.pending)
  )
const pendingQuestions = (app: DirectoryApp) =>
  runIn(
    app,
    Effect.flatMap(Question, (q) => q.pending)
  )

/**
 * The pending items: `remote` when the turns run elsewhere (a cluster's runners, known from their events), else every
 * app's; to a session and its descendants when `sessionID` is given.
 */
const gather = async <T extends { readonly sessionID: string }>(
  ctx: ServerContext,
  list: (app: DirectoryApp) => Promise<ReadonlyArray<T>>,
  sessionID: string | undefined,
  remote: ReadonlyArray<T> | undefined
): Promise<ReadonlyArray<T>> => {
  const all = remote ?? (await Promise.all((await ctx.directories.all()).map(list))).flat()
  return sessionID === undefined ? all : all.filter((item) => ctx.log.isWithin(item.sessionID, sessionID))
}

/** The `permissions` group: pending permission asks and questions, and their replies. */
export const permissionsApi = (ctx: ServerContext) =>
  HttpApiBuilder.group(LatheApi, "permissions", (handlers) =>
    handlers
      .handle("list", ({ query }) =>
        attempt(async () => {
          const asks = await gather(ctx, pendingAsks, query.sessionID, ctx.turns.pending?.().asks)
          return asks.map(
            (ask): PendingPermission => ({
              id: ask.id,
              sessionID: ask.sessionID,
              permission: ask.permission,
              patterns: [...ask.patterns],
              ...(ask.callID ? { callID: ask.callID } : {}),
              ...(ask.always ? { always: [...ask.always] } : {}),
              ...(ask.metadata ? { metadata: { ...ask.metadata } } : {})
            })
          )
        }, [])
      )
      .handle("reply", ({ params, payload }) =>
        attempt(async () => {
          if (ctx.turns.respond) {
            const found = await ctx.turns.respond({
              kind: "permission",
              requestID: params.requestID,
              reply: payload.reply,
              ...(payload.message ? { message: payload.message } : {})
            })
            if (!found) throw notPending("permission ask", params.requestID, "GET /permissions")
            return
          }
          const app = await findHolder(ctx, pendingAsks, params.requestID)
          if (!app) throw notPending("permission ask", params.requestID, "GET /permissions")
          const reply =
            payload.reply === "reject"
              ? { type: "reject" as const, ...(payload.message ? { message: payload.message } : {}) }
              : { type: payload.reply }
          await runIn(
            app,
            Effect.flatMap(PermissionNext, (p) => p.reply(params.requestID, reply))
          )
        }, ["not_found"])
      )
      .handle("questions", ({ query }) =>
        attempt(async () => {
          const questions = await gather(ctx, pendingQuestions, query.sessionID, ctx.turns.pending?.().questions)
          return questions.map(
            (q): PendingQuestion => ({
              id: q.id,
              sessionID: q.sessionID,
              questions: [...q.questions],
              ...(q.callID ? { callID: q.callID } : {})
            })
          )
        }, [])
      )
      .handle("answer", ({ params, payload }) =>
        attempt(async () => {
          if (payload.answers === undefined && payload.dismissed === undefined)
            throw apiErrorFailure(
              apiError.badRequest('Give either "answers" (one list of strings per question) or "dismissed" (a reason).')
            )
          if (ctx.turns.respond) {
            const found = await ctx.turns.respond({
              kind: "question",
              requestID: params.requestID,
              ...(payload.answers !== undefined ? { answers: payload.answers } : { dismissed: payload.dismissed ?? "" })
            })
            if (!found) throw notPending("question", params.requestID, "GET /questions")
            return
          }
          const app = await findHolder(ctx, pendingQuestions, params.requestID)
          if (!app) throw notPending("question", params.requestID, "GET /questions")
          await runIn(
            app,
            Effect.flatMap(Question, (q) =>
              payload.answers !== undefined
                ? q.reply(params.requestID, payload.answers)
                : q.dismiss(params.requestID, payload.dismissed)
            )
          )
        }, ["bad_request", "not_found"])
      )
  )

/** The 404 for a reply to something no longer (or never) pending. */
const notPending = (what: string, id: string, list: string) =>
  apiErrorFailure(
    apiError.notFound(
      `No pending ${what} "${id}": it was answered already, its turn ended, or the id is wrong. List them with ${list}.`
    )
  )
