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
import type { PermissionRequest } from "@lathe/plugin"
import { checkProtected, locate, resolvePath } from "@lathe/tools"
import { Effect } from "effect"
import { runOnApp } from "../app.js"
import { defineCommand, helpText, parseCommand, pickSubcommand } from "../command-kit.js"
import type { CliIO, Command } from "../io.js"
import { forgetCommand, listCommand } from "./permissions-approvals.js"

const explainSpec = defineCommand({
  name: "permissions explain",
  summary: "How this project's rules decide a request, and which rule (and which file) decided it",
  usage: ["<permission> <pattern> [--agent <name>] [--json]"],
  description: `Says how this project's rules decide a request, and which rule (and which file) decided it,
from exactly the ruleset a run evaluates: the built-in and plugins' defaults, the agent's rules
(--agent, default: the default agent), then your global and project config (last match wins),
then the approvals remembered by "always" replies. A bash pattern is analysed as a command line, one
verdict per simple command, plus external_directory for writes outside the project. A file tool's
path (write, edit, multiedit, apply_patch, read) gets a run's chain: external_directory when the
path's real location (symlinks followed) is outside the project, the tool's permission (edit, read),
then protected_path for a change to a protected file. An ask
only a person may approve (sandbox_escape, protected_path, an unknown command under deny rules)
says so: --yes, plugins, wildcard rules and the defaults do not approve it. The allow rules of
an untrusted project's config that would have applied are listed as dropped.
  lathe permissions explain bash "CI=true git push origin main"
  lathe permissions explain read .env`,
  options: {
    agent: { type: "string", value: "<name>", description: "The agent whose rules apply (default: the default agent)" },
    json: { type: "boolean", description: "Print the verdicts as JSON" }
  },
  positionals: { name: "<permission> <pattern>" }
})

const auditSpec = defineCommand({
  name: "permissions audit",
  summary: "The recorded permission decisions (newest last)",
  usage: ["[--session <id>] [--limit <n>] [--json]"],
  description: `Prints the recorded permission decisions (newest last).`,
  options: {
    session: { type: "string", value: "<id>", description: "Only this session's decisions" },
    limit: { type: "string", value: "<n>", description: "The last n decisions (default 50)" },
    json: { type: "boolean", description: "Print them as JSON" }
  }
})

const approvalsSpec = defineCommand({
  name: "permissions approvals",
  summary: 'What "always" replies remembered, numbered',
  usage: ["[--json]"],
  description: `Lists what "always" replies remembered, in every project, oldest first and numbered: permission,
pattern, project and when. An "always" on the repeated-call guard (doom_loop) lasts for its session
and is not stored.`,
  options: { json: { type: "boolean", description: "Print them as JSON" } }
})

const forgetSpec = defineCommand({
  name: "permissions forget",
  summary: "Remove remembered approvals by their number, or --all of them",
  usage: ["<n>... | --all"],
  description: `Removes remembered approvals by their number in that list, or --all of them; Lathe asks again,
also in sessions already running.`,
  options: { all: { type: "boolean", description: "Forget every remembered approval" } },
  positionals: { name: "<n>..." }
})

/** `lathe permissions`, declared once for the command kit. */
export const permissionsSpec = defineCommand({
  name: "permissions",
  usage: [
    "explain <permission> <pattern> [--agent <name>] [--json]",
    "audit [--session <id>] [--limit <n>] [--json]",
    "approvals [--json]",
    "forget <n>... | --all"
  ],
  subcommands: [explainSpec, auditSpec, approvalsSpec, forgetSpec]
})

/**
 * The file tools whose path argument `explain` takes, by tool name: the permission the tool asks with the path, and
 * whether it changes the file (a change also asks `protected_path`). `edit` and `read` are permissions as well.
 */
const FILE_TOOLS: Readonly<Record<string, { readonly permission: string; readonly changes: boolean }>> = {
  write: { permission: "edit", changes: true },
  edit: { permission: "edit", changes: true },
  multiedit: { permission: "edit", changes: true },
  apply_patch: { permission: "edit", changes: true },
  read: { permission: "read", changes: false }
}

/**
 * The asks a run makes for `permission` on `pattern`, in its order. For a file tool (see `FILE_TOOLS`) that is the
 * tools' own chain on the path taken from the working directory: `external_directory` when its real location (symlinks
 * resolved) is outside the project root, the tool's permission with the patterns it uses, then `protected_path` for a
 * change to a protected path. Any other permission is asked with the pattern as given (bash is analysed by `checksOf`).
 */
const asksOf = async (
  permission: string,
  pattern: string,
  context: { readonly root: string; readonly directory: string; readonly home: string }
): Promise<ReadonlyArray<PermissionRequest>> => {
  const tool = FILE_TOOLS[permission]
  if (tool === undefined || pattern.includes("*")) return [{ permission, patterns: [pattern] }]
  const asks: Array<PermissionRequest> = []
  const ctx = {
    root: context.root,
    ask: async (ask: PermissionRequest) => {
      asks.push(ask)
    }
  }
  const located = await locate(ctx, resolvePath(context, pattern, context.home), "file")
  asks.push({ permission: tool.permission, patterns: [...located.patterns] })
  if (tool.changes) await checkProtected(ctx, located.path, located.real)
  return asks
}

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
    const asks = yield* Effect.promise(() => asksOf(permission, pattern, context))
    const checks = asks.flatMap((ask) => checksOf({ sessionID: "explain", ruleset, ...ask }, context, parser))
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
  // A tool's name (`write`) asks another permission (`edit`): the check then names the permission it asked.
  const several = verdicts.length > 1 || verdicts.some((v) => v.check.permission !== permission)
  for (const verdict of verdicts) lines.push(...describeVerdict(verdict, several))
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
  const sub = pickSubcommand(permissionsSpec, args, io)
  if (typeof sub === "number") return sub
  if (sub.name === "explain") {
    const parsed = parseCommand(explainSpec, sub.rest, io)
    if (typeof parsed === "number") return parsed
    const [permission, pattern, ...extra] = parsed.positionals
    if (!permission || pattern === undefined || extra.length > 0) {
      io.stderr(
        `lathe permissions explain: expected a permission and one pattern (quote a command line), got ${parsed.positionals.length} argument(s)\n\n${helpText(explainSpec)}`
      )
      return 2
    }
    return explain(permission, pattern, { json: parsed.values.json ?? false, agent: parsed.values.agent }, io)
  }
  if (sub.name === "audit") {
    const parsed = parseCommand(auditSpec, sub.rest, io)
    return typeof parsed === "number" ? parsed : audit(parsed.values, io)
  }
  if (sub.name === "approvals") {
    const parsed = parseCommand(approvalsSpec, sub.rest, io)
    return typeof parsed === "number" ? parsed : listCommand(parsed.values.json ?? false, io)
  }
  const parsed = parseCommand(forgetSpec, sub.rest, io)
  if (typeof parsed === "number") return parsed
  return forgetCommand(parsed.positionals, parsed.values.all ?? false, io, helpText(forgetSpec))
}
