import {
  Config,
  createSession,
  LLM,
  listTurns,
  Plugins,
  redoSession,
  resolveAgents,
  SessionStore,
  SessionWriter,
  Snapshot,
  undoSession
} from "@lathe/core"
import type { Session } from "@lathe/core/schema"
import { LatheApi, type RevertResult, type SessionDiff, type UndoRequest } from "@lathe/sdk"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { runIn, type ServerContext } from "./context.js"
import { type DirectoryApp, resolveDirectory } from "./directories.js"
import { apiError, apiErrorFailure, attempt, fail } from "./errors.js"
import { patchFiles } from "./patch-stats.js"
import { listedSessions, rangeDiff, summariesPage } from "./session-views.js"

const drainingMessage = "The server is shutting down and takes no new work; start it again (or use another) and retry."

/** Checks at creation that the agent can take prompts and the model resolves, so a typo fails now with core's words. */
const checkAgentAndModel = (app: DirectoryApp, agent: string | undefined, model: string | undefined) =>
  runIn(
    app,
    Effect.gen(function* () {
      if (agent !== undefined) {
        const plugins = yield* Plugins
        const config = yield* Config
        const agents = resolveAgents(plugins.agents, config.info.agent)
        const found = agents.get(agent)
        if (!found || found.hidden || found.mode === "subagent") {
          const names = [...agents.values()].filter((a) => !a.hidden && a.mode !== "subagent").map((a) => a.name)
          return yield* Effect.fail({
            _tag: "AgentNotFound",
            message: `No agent "${agent}" can take a prompt. Available agents: ${names.sort().join(", ")}.`
          })
        }
      }
      if (model !== undefined) yield* Effect.flatMap(LLM, (llm) => llm.resolve(model))
    })
  )

/** The changes of a session: from the first step's snapshot to the work tree now; empty without a snapshot. */
const sessionDiff = (app: DirectoryApp, sessionID: string) =>
  runIn(
    app,
    Effect.gen(function* () {
      const store = yield* SessionStore
      const snapshot = yield* Snapshot
      const messages = yield* store.messages(sessionID)
      const first = messages
        .flatMap((m) => m.parts)
        .find((part) => part.type === "step-start" && part.snapshot !== undefined)
      const from = first?.type === "step-start" ? first.snapshot : undefined
      if (from === undefined) return { diff: "", files: [] } satisfies SessionDiff
      const diff = yield* snapshot.diff(from)
      const now = yield* snapshot.track
      const files = now === undefined ? [] : yield* snapshot.diffFull(from, now)
      return {
        diff,
        files: files.map((f) => ({ file: f.file, status: f.status, additions: f.additions, deletions: f.deletions }))
      } satisfies SessionDiff
    })
  )

/**
 * Clones `spec` for a just-created session and records it on the session; on failure the session is deleted again
 * and the request fails with the clone's own message (a bad URL, an unknown ref, a private repo).
 */
const withWorkspace = async (
  ctx: ServerContext,
  session: Session,
  spec: { readonly repo: string; readonly ref?: string }
): Promise<Session> => {
  const workspaces = ctx.options.workspaces
  const drop = () =>
    runIn(
      ctx.home,
      Effect.flatMap(SessionWriter, (writer) => writer.deleteSession(session.id))
    ).catch(() => undefined)
  if (!workspaces) {
    await drop()
    throw apiErrorFailure(apiError.badRequest("This server cannot clone repositories for sessions (no workspaces)."))
  }
  const opened = await Effect.runPromiseExit(workspaces.open(session.id, spec))
  if (opened._tag === "Failure") {
    await drop()
    const reason = opened.cause.reasons[0]
    const error = reason?._tag === "Fail" ? reason.error : undefined
    throw apiErrorFailure(apiError.badRequest(error ? error.message : `Could not clone "${spec.repo}".`))
  }
  // The clone is the session's work tree; it is not the server's, so the server's tree is dropped.
  const { tree: _, ...made } = session
  const updated: Session = { ...made, directory: opened.value, workspace: spec }
  await runIn(
    ctx.home,
    // The session now belongs to the clone's directory, whose app reads the store through its own connection:
    // the write must be out of this app's batch before anyone asks for it there.
    Effect.flatMap(SessionWriter, (writer) => writer.updateSession(updated, { durable: true }))
  )
  return updated
}

/** The `sessions` group: create, list, read, prompt, abort, diff, undo, redo, delete. */
export const sessionsApi = (ctx: ServerContext) =>
  HttpApiBuilder.group(LatheApi, "sessions", (handlers) =>
    handlers
      .handle("create", ({ payload }) =>
        ctx.draining
          ? fail(apiError.unavailable(drainingMessage))
          : attempt(async () => {
              if (payload.repo !== undefined && payload.directory !== undefined)
                throw apiErrorFailure(
                  apiError.badRequest('Give either "repo" (a repository to clone) or "directory", not both.')
                )
              if (payload.ref !== undefined && payload.repo === undefined)
                throw apiErrorFailure(apiError.badRequest('"ref" goes with "repo": name the repository to clone.'))
              const directory =
                payload.directory === undefined
                  ? ctx.home.directory
                  : await resolveDirectory(ctx.home.directory, payload.directory)
              if (payload.directory !== undefined)
                ctx.scope.check(directory, `The directory ${JSON.stringify(payload.directory)}`)
              const app = directory === ctx.home.directory ? ctx.home : await ctx.directories.get(directory)
              await checkAgentAndModel(app, payload.agent, payload.model)
              // Written out before the answer: a client may prompt the new session through another front of a
              // shared store at once (the store batches writes; an unflushed session is not there yet).
              const created = await runIn(
                app,
                createSession({
                  ...(payload.title ? { title: payload.title } : {}),
                  ...(payload.agent ? { agent: payload.agent } : {})
                }).pipe(Effect.tap(() => Effect.flatMap(SessionStore, (store) => store.flush)))
              )
              const session =
                payload.repo === undefined
                  ? created
                  : await withWorkspace(ctx, created, {
                      repo: payload.repo,
                      ...(payload.ref ? { ref: payload.ref } : {})
                    })
              ctx.remember(session)
              if (payload.model) ctx.sessionModels.set(session.id, payload.model)
              return ctx.info(session)
            }, ["bad_request", "forbidden"])
      )
      .handle("list", ({ query }) =>
        attempt(async () => {
          const listed = await listedSessions(ctx, query)
          const limited = query.limit === undefined ? listed : listed.slice(0, query.limit)
          return limited.map((session) => ctx.info(session))
        }, ["server_error"])
      )
      .handle("summaries", ({ query }) => attempt(() => summariesPage(ctx, query), ["server_error"]))
      .handle("get", ({ params }) =>
        attempt(async () => ctx.info((await ctx.session(params.id)).session), ["not_found"])
      )
      .handle("delete", ({ params }) =>
        attempt(async () => {
          const { app } = await ctx.session(params.id)
          if (ctx.turns.isRunning(params.id))
            throw { _tag: "SessionBusy", message: `Session ${params.id} is running a turn; abort it first.` }
          await runIn(
            app,
            Effect.flatMap(SessionWriter, (writer) => writer.deleteSession(params.id))
          )
        }, ["not_found", "conflict", "server_error"])
      )
      .handle("prompt", ({ params, payload }) =>
        ctx.draining
          ? fail(apiError.unavailable(drainingMessage))
          : attempt(async () => {
              if (payload.command === undefined && !payload.text)
                throw apiErrorFailure(apiError.badRequest('A prompt needs "text", or a "command" to expand.'))
              const { app } = await ctx.session(params.id)
              const model = payload.model ?? ctx.sessionModels.get(params.id)
              return ctx.turns.prompt(app, {
                sessionID: params.id,
                text: payload.text ?? "",
                ...(payload.command !== undefined ? { command: payload.command } : {}),
                ...(payload.arguments !== undefined ? { arguments: payload.arguments } : {}),
                ...(payload.agent ? { agent: payload.agent } : {}),
                ...(model ? { model } : {})
              })
            }, ["bad_request", "not_found"])
      )
      .handle("abort", ({ params }) =>
        attempt(async () => {
          await ctx.session(params.id)
          return { aborted: await ctx.turns.abort(params.id) }
        }, ["not_found"])
      )
      .handle("messages", ({ params }) =>
        attempt(async () => {
          const { app } = await ctx.session(params.id)
          return runIn(
            app,
            Effect.flatMap(SessionStore, (store) => store.messages(params.id))
          )
        }, ["not_found", "server_error"])
      )
      .handle("diff", ({ params, query }) =>
        attempt(async () => {
          const { session, app } = await ctx.session(params.id)
          if (query.from !== undefined || query.to !== undefined) {
            if (query.from === undefined)
              throw apiErrorFailure(apiError.badRequest('"to" goes with "from": name the snapshot to start from.'))
            if (session.workspace)
              throw apiErrorFailure(
                apiError.badRequest(
                  "A session in a server's clone keeps no step snapshots here: ask for its whole diff."
                )
              )
            return rangeDiff(app, params.id, query.from, query.to)
          }
          const workspaces = ctx.options.workspaces
          if (session.workspace && workspaces) {
            // From the recorded checkpoints: the same answer from any server, wherever the session runs.
            const diff = (await Effect.runPromise(workspaces.diff(params.id))) ?? ""
            return { diff, files: patchFiles(diff) } satisfies SessionDiff
          }
          return sessionDiff(app, params.id)
        }, ["bad_request", "not_found", "server_error"])
      )
      .handle("turns", ({ params }) =>
        attempt(async () => {
          const { app } = await ctx.session(params.id)
          return runIn(app, listTurns(params.id))
        }, ["not_found", "server_error"])
      )
      .handle("undo", ({ params, query }) =>
        revert(ctx, params.id, "undo", {
          ...(query.step === "true" ? { step: true } : {}),
          ...(query.turn !== undefined ? { turn: query.turn } : {}),
          ...(query.force === "true" ? { force: true } : {})
        })
      )
      .handle("redo", ({ params, query }) =>
        revert(ctx, params.id, "redo", query.force === "true" ? { force: true } : {})
      )
  )

const revert = (ctx: ServerContext, sessionID: string, verb: "undo" | "redo", options: UndoRequest) =>
  attempt(async (): Promise<RevertResult> => {
    const { app } = await ctx.session(sessionID)
    if (ctx.turns.isRunning(sessionID))
      throw { _tag: "SessionBusy", message: `Session ${sessionID} is running a turn; ${verb} once it is idle.` }
    if (ctx.turns.revert) {
      // The work tree lives where the session runs: the runner reverts it; the session is re-read from the store.
      const done = await ctx.turns.revert(sessionID, verb, options)
      if (!done.reverted) throw { _tag: "NothingToRevert", message: done.message }
      const again = await ctx.session(sessionID)
      return { session: ctx.info(again.session), files: [] }
    }
    const result = await runIn(app, verb === "undo" ? undoSession(sessionID, options) : redoSession(sessionID, options))
    return { session: ctx.info(result.session), files: result.files, overwritten: result.overwritten }
  }, ["not_found", "conflict", "server_error"])
