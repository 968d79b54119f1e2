import type { AgentDefinition, PermissionConfig } from "@lathe/plugin"
import { buildPrompt, explorePrompt, generalPrompt, planPrompt, summaryPrompt } from "./prompts.js"

/*
 * Contract: each agent's `permission` is appended AFTER the defaults of `@lathe/permission` and BEFORE the
 * person's config rules, and the last matching rule wins. So an agent can only add restrictions the person's own
 * rules may lift again, and the person's `agent.<name>` config can change any of it field by field.
 * Patterns of the file tools (`read`, `edit`, …) are paths relative to the project root; a path outside the project
 * is absolute and never matches a relative pattern.
 */

/** Where the plan agent may write: markdown files under `.lathe/plans/` (subfolders included). */
export const PLAN_FILES = ".lathe/plans/*.md"

/**
 * Bash commands the explore agent may propose (each one still asks the person): listing, reading and searching
 * files, and reading git history. Nothing here writes when used as intended.
 */
export const EXPLORE_READ_ONLY_COMMANDS: ReadonlyArray<string> = [
  "ls *",
  "pwd",
  "tree *",
  "cat *",
  "head *",
  "tail *",
  "wc *",
  "file *",
  "stat *",
  "du *",
  "find *",
  "rg *",
  "grep *",
  "git status*",
  "git log *",
  "git show *",
  "git diff *",
  "git blame *",
  "git ls-files *",
  "git grep *",
  "git rev-parse *"
]

/**
 * Flags that turn a listed command into one that writes files or runs other programs; refused even though the
 * command itself is listed (they come later, so they win).
 */
export const EXPLORE_REFUSED_COMMANDS: ReadonlyArray<string> = [
  "find *-delete*",
  "find *-fprint*",
  "find *-fls*",
  "rg *--pre*",
  "git *--output*"
]

// The same .env rules as the defaults: an agent that re-allows `read` must not silently widen them.
const readRules = { "*": "allow", "*.env": "ask", "*.env.*": "ask", "*.env.example": "allow" } as const

const explorePermission: PermissionConfig = {
  "*": "deny",
  read: readRules,
  glob: "allow",
  grep: "allow",
  list: "allow",
  webfetch: "allow",
  // Searching the web and public code reads, never changes (`@lathe/websearch`, or the provider's own search).
  websearch: "allow",
  codesearch: "allow",
  // The language servers' answers (diagnostics, hover, definitions, references, symbols) only read.
  "lsp_*": "allow",
  // Restated from the defaults, which "*": "deny" would otherwise override.
  doom_loop: "ask",
  external_directory: "ask",
  bash: {
    "*": "deny",
    ...Object.fromEntries(EXPLORE_READ_ONLY_COMMANDS.map((command) => [command, "ask"])),
    ...Object.fromEntries(EXPLORE_REFUSED_COMMANDS.map((command) => [command, "deny"]))
  }
}

/**
 * `build` (primary, the default): everything the person's rules allow. Its one rule offers `plan_enter` (denied by
 * the defaults): an ask, and one only a person may answer, so the rule approves nothing by itself.
 */
export const buildAgent: AgentDefinition = {
  name: "build",
  description: "The default agent: reads, edits and runs code to get the task done.",
  mode: "primary",
  prompt: buildPrompt,
  permission: { plan_enter: "ask" },
  // It is where plan_exit leads: leaving plan is not its move.
  tools: { plan_exit: false }
}

/** `plan` (primary): may read everything, write only plan files under `.lathe/plans/`; bash asks. */
export const planAgent: AgentDefinition = {
  name: "plan",
  description: "Studies the code and writes a plan to .lathe/plans/ without changing the project.",
  mode: "primary",
  prompt: planPrompt,
  // `.lathe/plans` itself: `mkdir -p .lathe/plans` before the first plan (bash writes are bound by these rules too).
  permission: { edit: { "*": "deny", ".lathe/plans": "allow", [PLAN_FILES]: "allow" }, bash: "ask" },
  // plan_exit (asked by default, of the person only) proposes the plan and hands over to build; plan_enter leads here.
  tools: { plan_enter: false }
}

/** `explore` (subagent): read-only whitelist; read-only bash commands ask, everything else is refused. */
export const exploreAgent: AgentDefinition = {
  name: "explore",
  description:
    "Fast read-only file search: finds files by name or content and answers questions about the codebase, " +
    "returning absolute paths. Say how thorough to be (quick, medium, very thorough).",
  mode: "subagent",
  prompt: explorePrompt,
  permission: explorePermission,
  tools: { todowrite: false, todoread: false, task: false }
}

/** `general` (subagent): multi-step research and execution, without the todo tools. */
export const generalAgent: AgentDefinition = {
  name: "general",
  description:
    "General-purpose subagent for multi-step research and execution; give it a self-contained task and it " +
    "reports back what it found or changed.",
  mode: "subagent",
  prompt: generalPrompt,
  tools: { todowrite: false, todoread: false }
}

/** `summary` (hidden): summarises a session; no tools, every permission refused. */
export const summaryAgent: AgentDefinition = {
  name: "summary",
  description: "Summarises a finished session for the session list.",
  mode: "primary",
  hidden: true,
  prompt: summaryPrompt,
  permission: { "*": "deny" },
  tools: { "*": false }
}

/** The built-in agents, in the order the plugin returns them. */
export const builtinAgents: ReadonlyArray<AgentDefinition> = [
  buildAgent,
  planAgent,
  exploreAgent,
  generalAgent,
  summaryAgent
]
