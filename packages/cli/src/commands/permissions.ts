import { parseArgs } from "node:util"
import { Config, type DroppedRule, Paths, runRuleset } from "@lathe/core"
import {
  approvalsPath,
  auditPath,
  checksOf,
  describeRule,
  loadBashParser,
  readApprovals,
  readAudit,
  type Verdict,
  verdictOf
} from "@lathe/permission"
import { Effect } from "effect"
import { runOnApp } from "../app.js"
import type { CliIO, Command } from "../io.js"
import { forgetCommand, listCommand } from "./permissions-approvals.js"

const usage = `Usage: lathe permissions explain <permission> <pattern> [--agent <name>] [--json]
       lathe permissions audit [--session <id>] [--limit <n>] [--json]
       lathe permissions approvals [--json]
       lathe permissions forget <n>... | --all

explain  Says how this project's rules decide a request, and which rule (and which file) decided it,
         from exactly the ruleset a run evaluates: the built-in and plugins' defaults, the agent's rules
         (--agent, default: the default agent), then your global and project config (last match wins),
         then the approvals remembered by "always" replies. A bash pattern is analysed as a command line, one
         verdict per simple command, plus external_directory for writes outside the project. An ask
         only a person may approve (sandbox_escape, protected_path, an unknown command under deny rules)
         says so: --yes, plugins, wildcard rules and the defaults do not approve it. The allow rules of
         an untrusted project's config that would have applied are listed as dropped.
           lathe permissions explain bash "CI=true git push origin main"
           lathe permissions explain read .env
audit    Prints the recorded permission decisions (newest last).
approvals  Lists what "always" replies remembered, in every project, oldest first and numbered: permission,
         pattern, project and when. An "always" on the repeated-call guard (doom_loop) lasts for its session
         and is not stored.
forget   Removes remembered approvals by their number in that list, or --all of them; Lathe asks again,
         also in sessions already running.
`

const explain = async (
  permission: string,
  pattern: string,
  options: { readonly json: boolean; readonly agent: string | undefined },
  io: CliIO
): Promise<number> => {
  const json = options.json
  // The services of a real run (defaults with every plugin's, agents, config with trust applied), MCP left unstarted.
  const program = Effect.gen(function* () {
    const config = yield* Config
    const paths = yield* Paths
    const { agentName, agent, ruleset } = yield* runRuleset(options.agent)
    if (agent === undefined)
      return yield* Effect.fail(new Error(`no agent is named "${agentName}"; \`lathe agents\` lists them`))
    const approvals = yield* readApprovals(approvalsPath(paths.data, paths.projectID))
    const parser = permission === "bash" ? yield* Effect.promise(() => loadBashParser()) : undefined
    const context = { root: paths.root, directory: paths.directory, home: paths.home }
    const checks = checksOf({ sessionID: "explain", permission, patterns: [pattern], ruleset }, context, parser)
    const verdicts = checks.map((check) => verdictOf(check, ruleset, approvals, paths.home))
    const asked = new Set(["*", ...checks.map((check) => check.permission)])
    const dropped = config.dropped.filter((rule) => asked.has(rule.permission))
    return { verdicts, dropped, root: paths.root, agentName }
  })
  const result = await runOnApp(io, program, { mcp: false })
  if (!result.ok) {
    io.stderr(`lathe permissions: ${result.message}\n`)
    return 1
  }
  const { verdicts, dropped, root, agentName } = result.value
  const overall = verdicts.some((v) => v.action === "deny")
    ? "deny"
    : verdicts.every((v) => v.action === "allow")
      ? "allow"
      : "ask"
  const personOnly = overall === "ask" && verdicts.some((v) => v.requiresPerson)
  if (json) {
    const decision = {
      permission,
      pattern,
      agent: agentName,
      decision: overall,
      ...(personOnly ? { requiresPerson: true } : {})
    }
    io.stdout(`${JSON.stringify({ ...decision, verdicts, dropped }, null, 2)}\n`)
    return 0
  }
  const lines = [
    `${permission} ${JSON.stringify(pattern)}: ${overall}${personOnly ? " (only a person may approve)" : ""}` +
      ` (agent ${agentName})`
  ]
  for (const verdict of verdicts) lines.push(...describeVerdict(verdict, verdicts.length > 1))
  if (dropped.length > 0) lines.push(...describeDropped(dropped, root))
  io.stdout(`${lines.join("\n")}\n`)
  return 0
}

const describeVerdict = (verdict: Verdict, several: boolean): Array<string> => {
  const { check, action, rule, by } = verdict
  const head = several ? [`  ${check.permission} ${JSON.stringify(check.pattern)}: ${action}`] : []
  const indent = several ? "    " : "  "
  const why =
    by === "approval" ? `remembered approval ${JSON.stringify(rule.pattern)} ("always" reply)` : describeRule(rule)
  return [
    ...head,
    `${indent}decided by: ${why}`,
    ...(check.unparsable ? [`${indent}unparsable: ${check.unparsable}; only "*" or this exact line can allow it`] : []),
    ...(verdict.requiresPerson ? [`${indent}${personOnlyNote(check)}`] : [])
  ]
}

/** Why a verdict is an ask only a person may approve, and what could allow it instead. */
const personOnlyNote = (check: Verdict["check"]): string =>
  check.personOnly
    ? `only a person may approve: --yes, plugins, wildcard rules ("*") and built-in defaults do not, and without a ` +
      `terminal it is refused; a rule naming ${check.permission} (e.g. "${check.permission}": "allow") or an ` +
      `"always" reply can allow it`
    : "only a person may approve: a deny rule could apply to what really runs, so --yes does not, and without a " +
      "terminal it is refused"

/** The project's allow rules that were not applied because the project is not trusted. */
const describeDropped = (dropped: ReadonlyArray<DroppedRule>, root: string): Array<string> => [
  `  dropped (this project is not trusted; \`lathe trust\` in ${root} applies them):`,
  ...dropped.map(
    (rule) =>
      `    ${rule.agent === undefined ? "" : `agent ${rule.agent}: `}${rule.permission} ${JSON.stringify(rule.pattern)} allow, from ${rule.source}`
  )
]

const audit = async (values: { session?: string; limit?: string; json?: boolean }, io: CliIO): Promise<number> => {
  const limit = values.limit === undefined ? 50 : Number(values.limit)
  if (!Number.isInteger(limit) || limit <= 0) {
    io.stderr(`lathe permissions audit: --limit expects a positive integer, got "${values.limit}"\n`)
    return 2
  }
  const paths = await Effect.runPromise(
    Effect.gen(function* () {
      return yield* Paths
    }).pipe(Effect.provide(Paths.layer(io.cwd, io.env)))
  )
  const entries = await readAudit(auditPath(paths.data), {
    ...(values.session ? { sessionID: values.session } : {}),
    limit
  })
  if (values.json) {
    io.stdout(`${entries.map((entry) => JSON.stringify(entry)).join("\n")}${entries.length ? "\n" : ""}`)
    return 0
  }
  if (entries.length === 0) io.stdout("No permission decisions recorded yet.\n")
  for (const entry of entries) {
    const why = entry.reason ?? (entry.rule ? describeRule(entry.rule) : "")
    io.stdout(
      `${new Date(entry.time).toISOString()} ${entry.sessionID} ${entry.permission} ${JSON.stringify(entry.pattern)} ${entry.decision} by ${entry.by}${why ? `: ${why}` : ""}\n`
    )
  }
  return 0
}

/** `lathe permissions`: explain how the rules decide a request, show the audit trail, list or forget approvals. */
export const permissionsCommand: Command = async (args, io) => {
  const parsed = (() => {
    try {
      return parseArgs({
        args: [...args],
        allowPositionals: true,
        options: {
          json: { type: "boolean" },
          session: { type: "string" },
          limit: { type: "string" },
          agent: { type: "string" },
          all: { type: "boolean" },
          help: { type: "boolean", short: "h" }
        },
        strict: true
      })
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error))
    }
  })()
  if (parsed instanceof Error) {
    io.stderr(`lathe permissions: ${parsed.message}\n\n${usage}`)
    return 2
  }
  const { values, positionals } = parsed
  const [sub, ...rest] = positionals
  if (values.help || sub === undefined) {
    io.stdout(usage)
    return values.help ? 0 : 2
  }
  if (sub === "explain") {
    const [permission, pattern, ...extra] = rest
    if (!permission || pattern === undefined || extra.length > 0) {
      io.stderr(
        `lathe permissions explain: expected a permission and one pattern (quote a command line), got ${rest.length} argument(s)\n\n${usage}`
      )
      return 2
    }
    return explain(permission, pattern, { json: values.json ?? false, agent: values.agent }, io)
  }
  if (sub === "audit") return audit(values, io)
  if (sub === "approvals") return listCommand(values.json ?? false, io)
  if (sub === "forget") return forgetCommand(rest, values.all ?? false, io, usage)
  io.stderr(`lathe permissions: unknown subcommand "${sub}"; use explain, audit, approvals or forget.\n\n${usage}`)
  return 2
}
