import type { PermissionConfig, Rule, Ruleset } from "@lathe/plugin"
import { permissionRules } from "@lathe/plugin/host"

// Evaluation (`evaluate`, `decide`, implicit asks) and wildcard matching are the author kit's (`@lathe/plugin`,
// `@lathe/plugin/host`): one door, imported from there. This file holds only what this package adds to them.

/**
 * Expands the config form into rules, in key order (a string value means pattern `*`):
 * `{ "*": "allow", "read": { "*": "allow", "*.env": "ask" }, "bash": "ask" }` is four rules. Wraps core's
 * `permissionRules`, so the CLI and the config loader expand alike.
 */
export const fromConfig = (config: PermissionConfig | undefined, source = "config"): Array<Rule> =>
  permissionRules(config, source)

/** Concatenates rulesets; later rulesets win under last-match-wins (defaults → agent → user → session). */
export const merge = (...rulesets: ReadonlyArray<Ruleset>): Array<Rule> => rulesets.flat()

/** The `source` of the built-in default rules: they never approve an ask only a person may approve. */
export const DEFAULTS_SOURCE = "defaults"

/**
 * The `source` of the rules `lathe run --allow/--deny` adds for one run: a script wrote them, so, like the defaults,
 * they never approve an ask only a person may approve (their deny still holds).
 */
export const RUN_FLAGS_SOURCE = "lathe run --allow/--deny"

/** Where `defaults` takes its paths from. */
export interface DefaultsOptions {
  /** The tool-output truncation directory (core's `truncationDir(data)`): reading it is never an external ask. */
  readonly truncationDir?: string
}

/**
 * The defaults the agents build on: everything allowed, except doom loops, directories outside the project,
 * reruns outside the sandbox and web and code searches (asked), `question` and `plan_enter` (denied: the build agent
 * offers `plan_enter`), `plan_exit` (asked: the plan agent proposes its plan), and `.env` files (asked,
 * `.env.example` allowed). A person-only ask (`sandbox_escape`, `plan_exit`, …) is never allowed by a default.
 */
export const defaults = (options: DefaultsOptions = {}): Array<Rule> => {
  const truncation = options.truncationDir ? { [`${options.truncationDir}/*`]: "allow" as const } : {}
  return fromConfig(
    {
      "*": "allow",
      doom_loop: "ask",
      sandbox_escape: "ask",
      external_directory: { "*": "ask", ...truncation },
      question: "deny",
      plan_enter: "deny",
      plan_exit: "ask",
      // A search sends the query to a service outside the machine (and a provider's own search cannot be asked per
      // call): asked, unless an agent (explore) or the person allows it.
      websearch: "ask",
      codesearch: "ask",
      read: { "*": "allow", "*.env": "ask", "*.env.*": "ask", "*.env.example": "allow" }
    },
    DEFAULTS_SOURCE
  )
}
