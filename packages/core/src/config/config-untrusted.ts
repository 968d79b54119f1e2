/**
 * What an untrusted project's config file may set: an allow-list, stated once in {@link untrustedConfig}. Every key
 * of the config schema has a decision (a test walks the schema and fails on a key without one): `keep` (it can only
 * narrow, or cannot reach anything), `drop` (it widens what Lathe does, where code goes, or overrides the person's
 * own choices), a narrowing function that keeps only the narrowing part, or a nested table.
 */
import { isAbsolute } from "node:path"
import { type ConfigPath, dotted, isObject } from "./config-load.js"
import { isRemoteInstruction } from "./rules-files.js"

/** What a narrowing function kept (`undefined`: nothing) and what it dropped, named for the notice. */
export interface Narrowed {
  readonly value: unknown
  readonly dropped: ReadonlyArray<string>
}

/**
 * One thing an untrusted file asked for and did not get: `name` as the notice names it, and, for a dropped key, the
 * value the file gave it (the plugin specs, the MCP servers, the URL), so a prompt can show what trusting would grant.
 */
export interface UntrustedItem {
  readonly name: string
  /** The file's raw value for a dropped key; absent when `name` already says it (narrowed rules, `{env:…}`). */
  readonly value?: unknown
}

/** The decision for one config key of an untrusted project's file; `why` is the one-line reason. */
export type UntrustedDecision =
  | { readonly kind: "keep"; readonly why: string }
  | { readonly kind: "drop"; readonly why: string; readonly name?: (value: unknown, label: string) => string }
  | { readonly kind: "narrow"; readonly why: string; readonly narrow: (value: unknown, label: string) => Narrowed }
  /** An object whose keys are decided by `fields`; `shorthand` expands a string form first (all or nothing). */
  | {
      readonly kind: "fields"
      readonly why: string
      readonly fields: UntrustedTable
      readonly shorthand?: (value: string) => unknown
    }
  /** A record of named entries (`agent.<name>`, `provider.<id>`), each an object whose keys `fields` decides. */
  | { readonly kind: "each"; readonly why: string; readonly fields: UntrustedTable }

/** Decisions by key. */
export type UntrustedTable = Readonly<Record<string, UntrustedDecision>>

const keep = (why: string): UntrustedDecision => ({ kind: "keep", why })
const drop = (why: string, name?: (value: unknown, label: string) => string): UntrustedDecision =>
  name ? { kind: "drop", why, name } : { kind: "drop", why }
const narrow = (why: string, fn: (value: unknown, label: string) => Narrowed): UntrustedDecision => ({
  kind: "narrow",
  why,
  narrow: fn
})
/** Keeps the value when `narrows` says it only narrows; otherwise drops it, named with its value. */
const only = (why: string, narrows: (value: unknown) => boolean): UntrustedDecision =>
  narrow(why, (value, label) =>
    narrows(value) ? { value, dropped: [] } : { value: undefined, dropped: [`${label} ${JSON.stringify(value)}`] }
  )

const dropAllow = (permission: unknown): { readonly kept: unknown; readonly removed: Array<string> } => {
  if (permission === "allow") return { kept: undefined, removed: ["*: *"] }
  if (!isObject(permission)) return { kept: permission, removed: [] }
  const removed: Array<string> = []
  const kept: Record<string, unknown> = {}
  for (const [name, rule] of Object.entries(permission)) {
    if (rule === "allow") removed.push(`${name}: *`)
    else if (!isObject(rule)) kept[name] = rule
    else {
      const inner: Record<string, unknown> = {}
      for (const [pattern, action] of Object.entries(rule))
        if (action === "allow") removed.push(`${name}: ${pattern}`)
        else inner[pattern] = action
      kept[name] = inner
    }
  }
  return { kept, removed }
}

const permissionRules = narrow("deny and ask rules only narrow; allow rules are dropped", (value, label) => {
  const { kept, removed } = dropAllow(value)
  return { value: kept, dropped: removed.length > 0 ? [`${label} allow rules (${removed.join(", ")})`] : [] }
})

/**
 * Whether an `instructions` entry (a path or glob) visibly stays inside the project as written: relative, no `~`, no
 * `..` segment (also inside `{a,b}` alternatives). Only an early notice: a glob can reach the parent in ways no
 * pattern check sees (`[.][.]`, `.{.,x}`, a symlinked folder), so the wall is where the files are read
 * (`SystemPrompt` reads a match of an untrusted entry only while its real path is inside the project).
 */
export const staysInProject = (pattern: string): boolean =>
  pattern.trim() !== "" &&
  !isAbsolute(pattern) &&
  !/^[\\/~]/.test(pattern) &&
  !/^[A-Za-z]:/.test(pattern) &&
  !/(^|[\\/{,])\.\.($|[\\/},])/.test(pattern)

const sameModel = "chooses which of your providers (and accounts) receives the code, and what it costs"

/**
 * The allow-list: every key of `ConfigFile` (see `config-schema.ts`) and what an untrusted project's file may do
 * with it. A new config key needs a decision here (`config-trust-allowlist.test.ts` fails until it has one); a key
 * that widens anything is `drop`.
 */
export const untrustedConfig: UntrustedTable = {
  $schema: keep("an editor hint; Lathe does not read it"),
  model: drop(sameModel),
  small_model: drop(sameModel),
  default_agent: drop("picks the agent (its prompt, tools and rules) that runs when you name none"),
  provider: {
    kind: "each",
    why: "providers are your accounts: where code is sent, with which key, at what price",
    fields: {
      type: drop("changes which API, and so which host, your key is sent to"),
      name: drop("relabels a provider, so you misread where code goes"),
      baseURL: drop("sends your code (and your key) to another server"),
      apiKey: drop("runs your session on an account the project chose, whose owner can read it"),
      headers: drop("adds headers to every request: tracking, or your secrets through {env:}"),
      options: drop("passed to the provider's SDK as is"),
      models: drop("overrides your models' limits and prices; new models only serve a `model` choice, itself dropped")
    }
  },
  permission: permissionRules,
  agent: {
    kind: "each",
    why: "agents are yours; a project may only narrow their tools and rules",
    fields: {
      description: drop("steers when the model hands work to a subagent"),
      mode: drop("can offer a primary agent as a subagent, or the reverse"),
      hidden: drop("hides an agent from you, or shows an internal one"),
      disable: drop("switching an agent off can fall back to a wider one (your default agent to build)"),
      prompt: drop("replaces your agent's instructions; a project speaks through AGENTS.md, labelled with its path"),
      model: drop(sameModel),
      temperature: drop("tunes your agent's model; not the project's choice"),
      top_p: drop("tunes your agent's model; not the project's choice"),
      reasoning: drop("thinking tokens are billed to you; how hard your model thinks is not the project's choice"),
      max_steps: drop("a higher cap lets a run go on (and cost) longer"),
      tools: narrow("only `false` entries apply: a project may switch tools off, never on", (value, label) => {
        if (!isObject(value)) return { value, dropped: [] }
        const on = Object.keys(value).filter((tool) => value[tool] !== false)
        const kept = Object.fromEntries(Object.entries(value).filter(([, enabled]) => enabled === false))
        return { value: kept, dropped: on.length > 0 ? [`${label} turned on (${on.join(", ")})`] : [] }
      }),
      permission: permissionRules,
      color: keep("display only")
    }
  },
  plugin: drop("runs the project's code inside Lathe, with your rights"),
  mcp: drop("starts the project's commands, or connects to its URLs", (value, label) =>
    isObject(value) ? `${label} servers (${Object.keys(value).join(", ")})` : label
  ),
  mcp_tool_search: drop("tunes how your MCP servers' tools are offered"),
  mcp_startup_wait: drop("a long wait holds up every run; how long your runs wait for servers is yours to choose"),
  disabled_plugins: drop("could switch off a guard or redaction plugin"),
  plugin_timeout_ms: drop("a tiny timeout silently skips your plugins' hooks (redaction, guards)"),
  hooks: drop("runs the project's shell commands at every prompt and tool call", (value, label) =>
    isObject(value) ? `${label} (${Object.keys(value).join(", ")})` : label
  ),
  instructions: narrow(
    "entries that visibly leave the project, and URLs (remote text sent as instructions), are dropped early; every " +
      "match is checked again when it is read",
    (value, label) => {
      if (!Array.isArray(value)) return { value, dropped: [] }
      const outside = value.filter(
        (entry) => typeof entry === "string" && (isRemoteInstruction(entry) || !staysInProject(entry))
      )
      return {
        value: value.filter((entry) => !outside.includes(entry)),
        dropped: outside.map((entry) => `${label} ${JSON.stringify(entry)}`)
      }
    }
  ),
  // Numbers the person may have tuned: a project's value would replace theirs (more output, a looser guard).
  tool_output: drop("sets how much tool output reaches the model, and what it costs you"),
  doom_loop: drop("can loosen or switch off the repeated-call guard"),
  // Dropped, not narrowed: a file alone cannot tell a lower cap from a higher one than the person's own.
  max_steps: drop("a higher cap (or 0, none) lets a turn go on, and cost, longer"),
  // Kept, and merged as the lower of the person's cap and the project's (`config.ts`): a project can only lower one.
  budget: {
    kind: "fields",
    why: "a project may lower a cost cap, never raise or remove one",
    fields: {
      max_cost: keep("merged as the lower of yours and the project's"),
      max_session_cost: keep("merged as the lower of yours and the project's")
    }
  },
  retry: keep("retries repeat the same request to your own provider; they reach nothing new"),
  compaction: drop("changes how your history is summarised and pruned"),
  summary: drop("a session summary costs you one more request after every turn"),
  snapshot: drop("undo snapshots are your safety net; a project may not turn them off or shrink them"),
  sandbox: {
    kind: "fields",
    why: "a project may tighten the sandbox, never loosen it",
    shorthand: (value) => (value === "required" ? { required: true } : { mode: value }),
    fields: {
      mode: only('only "read-only" narrows ("workspace-write" is wider than your read-only)', (v) => v === "read-only"),
      // A list of hosts is dropped too: the file alone cannot tell whether it is narrower than the person's own setting.
      network: only("only false narrows (true or a list of hosts opens the network)", (value) => value === false),
      required: only("only true narrows", (value) => value === true)
    }
  },
  lsp: drop("starts the programs the project names as language servers, or installs servers", (value, label) =>
    isObject(value) ? `${label} (${Object.keys(value).join(", ")})` : label
  ),
  webfetch: {
    kind: "fields",
    why: "what webfetch may reach",
    fields: { allow_private_hosts: drop("opens this machine and your private network to webfetch") }
  },
  websearch: {
    kind: "fields",
    why: "where your searches (and the keys they carry) go",
    fields: {
      backend: only('only "off" narrows (another service receives your searches)', (value) => value === "off"),
      url: drop("sends your searches, with your search key, to a server the project chose"),
      key_env: drop("sends the variable the project names, as a key, to the search service"),
      max_results: keep("how many results come back reaches nothing new"),
      native: only("only false narrows (no provider search)", (value) => value === false),
      codesearch: {
        kind: "fields",
        why: "where your code searches (and your token) go",
        fields: {
          backend: only('only "off" narrows', (value) => value === "off"),
          url: drop("sends your code searches, with your token, to a server the project chose"),
          token_env: drop("sends the variable the project names, as a token, to the code search service")
        }
      }
    }
  },
  store: drop("could send every session (files, command output) to the project's database"),
  models: {
    kind: "fields",
    why: "where the model catalogue is downloaded from",
    fields: {
      refresh: only("only false narrows (no download)", (value) => value === false),
      notice: only("only false narrows (no notice)", (value) => value === false),
      url: drop("downloads your model limits and prices from a server the project chose")
    }
  },
  shell: {
    kind: "fields",
    why: "how commands get their environment",
    fields: {
      env: {
        kind: "fields",
        why: "which variables reach commands",
        fields: {
          inherit: drop("passes secret-looking variables (keys, tokens) to the project's commands"),
          set: drop("changes what every command runs with (PATH, NODE_OPTIONS, GIT_SSH_COMMAND)")
        }
      }
    }
  }
}

const applyFields = (
  table: UntrustedTable,
  value: Record<string, unknown>,
  path: ConfigPath,
  dropped: Array<UntrustedItem>
): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) {
    const kept = apply(Object.hasOwn(table, key) ? table[key] : undefined, item, [...path, key], dropped)
    if (kept !== undefined) out[key] = kept
  }
  return out
}

// A key with no decision is not a config key: it stays, so validation names it as unknown.
const apply = (
  decision: UntrustedDecision | undefined,
  value: unknown,
  path: ConfigPath,
  dropped: Array<UntrustedItem>
): unknown => {
  const label = dotted(path)
  if (decision === undefined || decision.kind === "keep") return value
  switch (decision.kind) {
    case "drop":
      dropped.push({ name: decision.name ? decision.name(value, label) : label, value })
      return undefined
    case "narrow": {
      const narrowed = decision.narrow(value, label)
      dropped.push(...narrowed.dropped.map((name) => ({ name })))
      return narrowed.value
    }
    case "fields": {
      if (typeof value === "string" && decision.shorthand) {
        const inner: Array<UntrustedItem> = []
        const expanded = decision.shorthand(value)
        if (isObject(expanded)) applyFields(decision.fields, expanded, path, inner)
        if (inner.length === 0) return value
        dropped.push({ name: `${label} ${JSON.stringify(value)}` })
        return undefined
      }
      return isObject(value) ? applyFields(decision.fields, value, path, dropped) : value
    }
    case "each": {
      if (!isObject(value)) return value
      const entries = Object.entries(value).flatMap(([name, item]) => {
        if (!isObject(item)) return [[name, item] as const]
        const kept = applyFields(decision.fields, item, [...path, name], dropped)
        // An entry that lost everything is gone, not an empty definition (a provider without a type is an error).
        return Object.keys(kept).length === 0 && Object.keys(item).length > 0 ? [] : [[name, kept] as const]
      })
      return Object.fromEntries(entries)
    }
  }
}

/**
 * Applies {@link untrustedConfig} to an untrusted file's raw value: what it does not keep is removed and named
 * (`plugin`, `permission allow rules (bash: *)`, `provider.local.baseURL`, `sandbox "off"`, …), in file order;
 * `items` are the same, each with the value it asked for where the name does not carry it.
 */
export const stripUntrusted = (
  value: unknown
): { readonly value: unknown; readonly dropped: Array<string>; readonly items: Array<UntrustedItem> } => {
  if (!isObject(value)) return { value, dropped: [], items: [] }
  const items: Array<UntrustedItem> = []
  const kept = applyFields(untrustedConfig, value, [], items)
  return { value: kept, dropped: items.map((item) => item.name), items }
}

/** An `allow` rule an untrusted project file asked for and did not get; `agent` is set for an agent's rule. */
export interface DroppedRule {
  readonly permission: string
  readonly pattern: string
  /** The file that asked for it. */
  readonly source: string
  readonly agent?: string
}

/**
 * The `allow` rules (top level and per agent) that {@link stripUntrusted} drops from a file's raw value, one per
 * permission and pattern, so `lathe permissions explain` can name them. `"permission": "allow"` is `* *`.
 */
export const droppedAllowRules = (value: unknown, source: string): Array<DroppedRule> => {
  if (!isObject(value)) return []
  const rules = (permission: unknown, agent?: string): Array<DroppedRule> =>
    dropAllow(permission).removed.map((entry) => {
      const at = entry.indexOf(": ")
      const rule = { permission: entry.slice(0, at), pattern: entry.slice(at + 2), source }
      return agent === undefined ? rule : { ...rule, agent }
    })
  const agents = isObject(value.agent) ? Object.entries(value.agent) : []
  return [
    ...rules(value.permission),
    ...agents.flatMap(([name, agent]) => (isObject(agent) ? rules(agent.permission, name) : []))
  ]
}
