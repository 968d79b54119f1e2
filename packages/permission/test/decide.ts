import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import type { PermissionConfig, Ruleset } from "@lathe/plugin"
import type { Parser } from "web-tree-sitter"
import { type CheckContext, checksOf, verdictOf } from "../src/checks.js"
import { fromConfig } from "../src/ruleset.js"
import { tempRoot } from "./helpers.js"

/** The overall decision of a bash ask: any deny denies; an ask only a person may approve is "person". */
export type Decision = "allow" | "ask" | "person" | "deny"

/** A project folder with a `sub/` folder and an `a.txt`, and a home outside it. */
export const project = (): CheckContext => {
  const root = tempRoot()
  mkdirSync(join(root, "sub"))
  writeFileSync(join(root, "a.txt"), "a\n")
  const home = tempRoot()
  return { root, directory: root, home }
}

/** Rules from the config form, as a project's lathe.json would give them. */
export const rules = (config: PermissionConfig): Ruleset => fromConfig(config, "test.json")

/** Decides a bash line the way PermissionLive does (checks, then the strictest verdict), without asking. */
export const decide = (
  parser: Parser,
  context: CheckContext,
  ruleset: Ruleset,
  line: string,
  metadata: Record<string, unknown> = {}
): Decision => {
  const request = { sessionID: "s", permission: "bash", patterns: [line], ruleset, metadata }
  const verdicts = checksOf(request, context, parser).map((check) => verdictOf(check, ruleset, [], context.home))
  if (verdicts.some((verdict) => verdict.action === "deny")) return "deny"
  if (verdicts.some((verdict) => verdict.requiresPerson)) return "person"
  return verdicts.some((verdict) => verdict.action === "ask") ? "ask" : "allow"
}
