import { statSync } from "node:fs"
import {
  Bus,
  Paths,
  type PendingAsk,
  type PermissionAsk,
  PermissionNext,
  type PermissionReply,
  Plugins
} from "@lathe/core"
import {
  denied,
  PermissionDenied,
  type PermissionError,
  PermissionRejected,
  type Rule,
  type Ruleset,
  rejected
} from "@lathe/plugin"
import { Clock, Deferred, Effect, Layer } from "effect"
import type { Parser } from "web-tree-sitter"
import {
  APPROVAL_SOURCE,
  type Approval,
  approvalRules,
  approvalsPath,
  readApprovalList,
  SESSION_ONLY_PERMISSIONS,
  writeApprovals
} from "./approvals.js"
import { type AuditEntry, appendAudit, auditPath } from "./audit.js"
import { loadBashParser } from "./bash.js"
import { type Check, checksOf, type Verdict, verdictOf } from "./checks.js"
import { verdictDecision, verdictsDecision } from "./decision.js"
import { personOnlyMessage } from "./describe.js"

interface Waiting {
  readonly info: PendingAsk
  readonly request: PermissionAsk
  readonly open: ReadonlyArray<Verdict>
  readonly deferred: Deferred.Deferred<void, PermissionError>
}

const severity = (verdict: Verdict): number =>
  verdict.action === "deny" ? 3 : verdict.action === "allow" ? 0 : verdict.requiresPerson ? 2 : 1
/** The strictest of several verdicts on one check (a subagent under its parents' rules). */
const strictest = (verdicts: ReadonlyArray<Verdict>): Verdict =>
  verdicts.reduce((worst, next) => (severity(next) > severity(worst) ? next : worst))

/**
 * Changes whenever the approvals file is replaced (writes rename a new file over it) or removed. Synchronous (one
 * stat, microseconds) so that an ask reaches `pending` without an extra trip through the event loop.
 */
const fileStamp = (path: string) =>
  Effect.sync(() => {
    const info = statSync(path, { throwIfNoEntry: false })
    return info ? `${info.ino}:${info.mtimeMs}:${info.size}` : "missing"
  })

const approvalKey = (rule: Rule) => `${rule.permission}\u0000${rule.pattern}`

const newID = () => `per_${process.getBuiltinModule("node:crypto").randomBytes(8).toString("hex")}`

const cancelled = (request: PermissionAsk, patterns: ReadonlyArray<string>) =>
  new PermissionRejected({
    permission: request.permission,
    patterns: [...patterns],
    message: `This ${request.permission} request was cancelled because the session was aborted.`
  })

const make = Effect.gen(function* () {
  const bus = yield* Bus
  const plugins = yield* Plugins
  const paths = yield* Paths
  const file = approvalsPath(paths.data, paths.projectID)
  const trail = auditPath(paths.data)
  const context = { root: paths.root, directory: paths.directory, home: paths.home }
  // The project's stored approvals, re-read when the file changes (so `lathe permissions forget` and other sessions'
  // "always" replies reach a running session), and the session-only ones (`doom_loop`), per session.
  let stored: ReadonlyArray<Approval> = yield* readApprovalList(file)
  let approvals: Ruleset = approvalRules(stored)
  let stamp = yield* fileStamp(file)
  const sessionApprovals = new Map<string, Ruleset>()
  const approvalsFor = (sessionID: string) =>
    Effect.gen(function* () {
      const now = yield* fileStamp(file)
      if (now !== stamp) {
        // A file that became unreadable keeps what was loaded; it is re-read once it changes again.
        const read = yield* Effect.result(readApprovalList(file))
        if (read._tag === "Success") {
          stored = read.success
          approvals = approvalRules(stored)
        } else yield* Effect.logWarning(`${read.failure.message} Using the approvals loaded before.`)
        stamp = now
      }
      const session = sessionApprovals.get(sessionID)
      return session ? [...approvals, ...session] : approvals
    })
  const pending = new Map<string, Waiting>()
  const parser = yield* Effect.cached(Effect.promise((): Promise<Parser> => loadBashParser()))

  const audit = (request: PermissionAsk, verdicts: ReadonlyArray<Verdict>, fields: Partial<AuditEntry> = {}) =>
    Effect.gen(function* () {
      const time = yield* Clock.currentTimeMillis
      const entries = verdicts.map(
        (verdict): AuditEntry => ({
          time,
          sessionID: request.sessionID,
          ...(request.callID ? { callID: request.callID } : {}),
          permission: verdict.check.permission,
          pattern: verdict.check.pattern,
          decision: verdict.action,
          by: verdict.by,
          rule: verdict.rule,
          ...(verdict.check.unparsable ? { reason: `unparsable: ${verdict.check.unparsable}` } : {}),
          ...fields
        })
      )
      yield* appendAudit(trail, entries)
    })

  const publishReply = (waiting: Waiting, reply: PermissionReply["type"], message?: string) =>
    bus.publish({
      type: "permission.replied",
      id: waiting.info.id,
      sessionID: waiting.info.sessionID,
      reply,
      ...(message ? { message } : {})
    })

  /** Resolves asks whose every open check a remembered approval now covers. */
  const settleCovered = Effect.gen(function* () {
    for (const waiting of [...pending.values()]) {
      const approved = yield* approvalsFor(waiting.request.sessionID)
      const now = waiting.open.map((verdict) => verdictOf(verdict.check, waiting.request.ruleset, approved, paths.home))
      if (!now.every((verdict) => verdict.action === "allow")) continue
      pending.delete(waiting.info.id)
      yield* audit(waiting.request, now, { requestID: waiting.info.id, reason: "covered by a new remembered approval" })
      waiting.request.onDecided?.({ by: "person", reply: "always" })
      yield* publishReply(waiting, "always")
      yield* Deferred.succeed(waiting.deferred, undefined)
    }
  })

  /**
   * Remembers an "always" reply: for the session only when its permission is session-only (`doom_loop`), else in
   * the project's file, with the time and project folder. The file is re-read first, so an approval forgotten
   * meanwhile is not written back.
   */
  const remember = (sessionID: string, checks: ReadonlyArray<Check>) =>
    Effect.gen(function* () {
      const time = yield* Clock.currentTimeMillis
      const onDisk = yield* readApprovalList(file).pipe(Effect.orElseSucceed(() => stored))
      const session = [...(sessionApprovals.get(sessionID) ?? [])]
      const known = new Set([...approvalRules(onDisk), ...session].map(approvalKey))
      const added: Array<Approval> = []
      for (const check of checks) {
        for (const pattern of check.always) {
          const rule: Rule = { permission: check.permission, pattern, action: "allow", source: APPROVAL_SOURCE }
          if (known.has(approvalKey(rule))) continue
          known.add(approvalKey(rule))
          if (SESSION_ONLY_PERMISSIONS.has(rule.permission)) session.push(rule)
          else added.push({ ...rule, time, project: paths.root })
        }
      }
      sessionApprovals.set(sessionID, session)
      stored = [...onDisk, ...added]
      approvals = approvalRules(stored)
      if (added.length === 0) return
      yield* writeApprovals(file, stored).pipe(
        Effect.catch((error) => Effect.logWarning(`${error.message} The approval holds for this run only.`))
      )
      stamp = yield* fileStamp(file)
    })

  const reply = Effect.fn("PermissionNext.reply")(function* (id: string, answer: PermissionReply) {
    const waiting = pending.get(id)
    if (!waiting) return
    pending.delete(id)
    const { request, open } = waiting
    // A blanket --yes never approves an ask marked as needing a person: it is rejected, and the model told why.
    if (answer.type !== "reject" && answer.by === "yes" && open.some((verdict) => verdict.requiresPerson)) {
      const message = personOnlyMessage(waiting.info, "yes")
      yield* audit(request, open, { requestID: id, decision: "reject", by: "yes", reason: message })
      request.onDecided?.({ by: "flag", source: "--yes" })
      yield* publishReply(waiting, "reject", message)
      const patterns = [...waiting.info.patterns]
      return yield* Deferred.fail(
        waiting.deferred,
        new PermissionRejected({ permission: request.permission, patterns, message })
      )
    }
    if (answer.type === "reject") {
      const message = answer.message?.trim() || undefined
      yield* audit(request, open, {
        requestID: id,
        decision: "reject",
        by: "reply",
        ...(message ? { reason: message } : {})
      })
      request.onDecided?.({ by: "person" })
      yield* publishReply(waiting, "reject", message)
      yield* Deferred.fail(waiting.deferred, rejected(request.permission, waiting.info.patterns, message))
      // A person who says no to one ask of a session means the others too.
      for (const other of [...pending.values()]) {
        if (other.info.sessionID !== request.sessionID) continue
        pending.delete(other.info.id)
        yield* audit(other.request, other.open, {
          requestID: other.info.id,
          decision: "reject",
          by: "reply",
          reason: "another ask of this session was rejected"
        })
        other.request.onDecided?.({ by: "person" })
        yield* publishReply(other, "reject")
        yield* Deferred.fail(other.deferred, rejected(other.request.permission, other.info.patterns))
      }
      return
    }
    yield* audit(request, open, { requestID: id, decision: answer.type, by: answer.by === "yes" ? "yes" : "reply" })
    request.onDecided?.(
      answer.by === "yes" ? { by: "flag", source: "--yes", reply: answer.type } : { by: "person", reply: answer.type }
    )
    yield* publishReply(waiting, answer.type)
    yield* Deferred.succeed(waiting.deferred, undefined)
    if (answer.type === "always") {
      yield* remember(
        request.sessionID,
        open.map((verdict) => verdict.check)
      )
      yield* settleCovered
    }
  })

  const waitFor = (waiting: Waiting) => {
    const { request, deferred, info } = waiting
    const answered = Deferred.await(deferred)
    const signal = request.signal
    if (!signal) return answered
    const aborted = Effect.callback<never, PermissionRejected>((resume) => {
      const onAbort = () => resume(Effect.fail(cancelled(request, info.patterns)))
      if (signal.aborted) onAbort()
      else signal.addEventListener("abort", onAbort, { once: true })
      return Effect.sync(() => signal.removeEventListener("abort", onAbort))
    })
    return Effect.raceFirst(answered, aborted)
  }

  const ask = Effect.fn("PermissionNext.ask")(function* (request: PermissionAsk) {
    const checks = checksOf(request, context, request.permission === "bash" ? yield* parser : undefined)
    const rulesets = [request.ruleset, ...(request.constraints ?? [])]
    const approved = yield* approvalsFor(request.sessionID)
    const verdicts = checks.map((check) => strictest(rulesets.map((rs) => verdictOf(check, rs, approved, paths.home))))
    const deny = verdicts.find((verdict) => verdict.action === "deny")
    if (deny) {
      yield* audit(request, [deny])
      request.onDecided?.(verdictDecision(deny))
      return yield* Effect.fail(denied(deny.check.permission, deny.check.pattern, deny.rule))
    }
    const open = verdicts.filter((verdict) => verdict.action === "ask")
    yield* audit(
      request,
      verdicts.filter((verdict) => verdict.action === "allow")
    )
    if (open.length === 0) {
      const decision = verdictsDecision(verdicts)
      if (decision) request.onDecided?.(decision)
      return
    }

    const patterns = open.map((verdict) => verdict.check.pattern)
    const metadata = request.metadata ?? {}
    const hook = yield* plugins.trigger(
      "permission.ask",
      {
        sessionID: request.sessionID,
        ...(request.callID ? { callID: request.callID } : {}),
        permission: request.permission,
        patterns,
        metadata
      },
      { status: "ask" }
    )
    const personOnly = open.some((verdict) => verdict.requiresPerson)
    if (hook.status === "allow" && personOnly) {
      // A hook may deny a person-only ask, never approve it: the person is asked all the same.
      const reason = "a permission.ask plugin hook allowed it, but only a person may approve it, so the person is asked"
      yield* audit(request, open, { decision: "ask", by: "hook", reason })
    } else if (hook.status !== "ask") {
      const reason = hook.message ?? `decided by a permission.ask plugin hook`
      yield* audit(request, open, { decision: hook.status, by: "hook", reason })
      request.onDecided?.({ by: "hook", ...(hook.message ? { rule: hook.message } : {}) })
      if (hook.status === "allow") return
      const first = open[0] as Verdict
      return yield* Effect.fail(
        new PermissionDenied({
          permission: first.check.permission,
          pattern: first.check.pattern,
          message: `Permission "${first.check.permission}" is denied for "${first.check.pattern}" by a plugin${hook.message ? `: ${hook.message}` : "."} Do not retry it; choose another approach or ask the user.`
        })
      )
    }

    const info: PendingAsk = {
      id: newID(),
      sessionID: request.sessionID,
      ...(request.callID ? { callID: request.callID } : {}),
      permission: request.permission,
      patterns,
      always: [...new Set(open.flatMap((verdict) => verdict.check.always))],
      ...(personOnly ? { requiresPerson: true } : {}),
      metadata: {
        ...metadata,
        ...(personOnly ? { requiresPerson: true } : {}),
        checks: open.map(({ check, rule, requiresPerson }) => ({
          permission: check.permission,
          pattern: check.pattern,
          always: check.always,
          rule,
          ...(check.unparsable ? { unparsable: check.unparsable } : {}),
          ...(requiresPerson ? { requiresPerson } : {})
        }))
      }
    }
    const waiting: Waiting = { info, request, open, deferred: yield* Deferred.make<void, PermissionError>() }
    pending.set(info.id, waiting)
    yield* bus.publish({
      type: "permission.asked",
      id: info.id,
      sessionID: info.sessionID,
      ...(info.callID ? { callID: info.callID } : {}),
      permission: info.permission,
      patterns: [...patterns],
      always: [...(info.always ?? [])],
      metadata: info.metadata ?? {}
    })
    // An abort or an interrupted caller leaves `pending` at once, with a reply event and an audit line.
    const leave = Effect.suspend(() => {
      if (!pending.has(info.id)) return Effect.void
      pending.delete(info.id)
      return Effect.andThen(
        audit(request, open, { requestID: info.id, decision: "reject", by: "abort", reason: "aborted" }),
        publishReply(waiting, "reject", "aborted")
      )
    })
    return yield* waitFor(waiting).pipe(Effect.ensuring(leave))
  })

  return PermissionNext.of({
    ask,
    reply,
    pending: Effect.sync(() => [...pending.values()].map((waiting) => waiting.info))
  })
})

/**
 * The real `PermissionNext`: rules, the `permission.ask` hook, remembered approvals (per project, in
 * `<data>/permission/<projectID>.json`, except `doom_loop` ones, which last for the session), asks published on the
 * Bus, and an audit line per decision in
 * `<data>/permission/audit.jsonl`. Fails to build with `ApprovalStoreError` when the approvals file is corrupt.
 */
export const PermissionLive = Layer.effect(PermissionNext, make)
