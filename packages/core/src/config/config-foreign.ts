/**
 * Reading another agent's config file as a Lathe config source: Claude Code settings (`config-claude.ts`) and
 * OpenCode config (`config-opencode.ts`). The file is translated to Lathe's shape, then goes through the same trust
 * rule as a `lathe.json` (an untrusted project's file may only narrow) and the same validation, key by key, so one
 * value Lathe cannot take is named in a notice instead of stopping Lathe.
 */

import type { Rule } from "@lathe/plugin"
import { Effect } from "effect"
import { type ClaudePlaces, translateClaudeSettings } from "./config-claude.js"
import {
  type ConfigError,
  envReferences,
  isObject,
  type ParsedConfig,
  parseJsonc,
  type ResolvedEnv,
  substitute,
  validate
} from "./config-load.js"
import { translateOpencode } from "./config-opencode.js"
import { type ConfigFile, configFileSchemaFor } from "./config-schema.js"
import { type DroppedRule, droppedAllowRules, stripUntrusted, type UntrustedItem } from "./config-untrusted.js"

/** Which agent's file a source is. */
export type ForeignFormat = "claude-code" | "opencode"

/** One foreign file, read, translated and with the trust rule applied. */
export interface ForeignLoaded {
  readonly parsed: ParsedConfig
  /** The Lathe config it gives (validated; what did not validate is in `problems`). */
  readonly data: ConfigFile
  /** Claude Code's rules, translated; an untrusted project keeps only deny and ask. */
  readonly rules: Array<Rule>
  /** What an untrusted project's file asked for and did not get. */
  readonly items: Array<UntrustedItem>
  readonly dropped: Array<DroppedRule>
  /** Rules that could not be translated, keys not understood, values Lathe cannot take. */
  readonly problems: Array<string>
  readonly envResolved: Array<ResolvedEnv>
}

/**
 * Takes `text`, the contents of `file`, as `format`. Fails only when it is not JSON(C) (like a `lathe.json`):
 * everything else is kept or named in `problems`. The config loader reads the file itself and loads this module only
 * when the file exists, so a run without Claude Code or OpenCode files evaluates none of the translators.
 */
export const loadForeign = Effect.fnUntraced(function* (
  file: string,
  text: string,
  format: ForeignFormat,
  options: {
    readonly trusted: boolean
    readonly places: ClaudePlaces
    readonly env: Readonly<Record<string, string | undefined>>
  }
): Effect.fn.Return<ForeignLoaded, ConfigError> {
  const parsed = yield* parseJsonc(file, text)
  const problems: Array<string> = []
  const items: Array<UntrustedItem> = []
  const dropped: Array<DroppedRule> = []
  const envResolved: Array<ResolvedEnv> = []
  let rules: Array<Rule> = []
  let value: Record<string, unknown>
  if (format === "claude-code") {
    const settings = translateClaudeSettings(parsed, options.places)
    problems.push(...settings.untranslated)
    value = settings.config
    if (options.trusted) rules = settings.rules.map((r) => r.rule)
    else {
      const asked = new Set<string>()
      for (const { rule, claude } of settings.rules) {
        if (rule.action !== "allow") rules.push(rule)
        else {
          dropped.push({ permission: rule.permission, pattern: rule.pattern, source: file })
          if (!asked.has(claude)) items.push({ name: `permissions allow ${claude}` })
          asked.add(claude)
        }
      }
    }
  } else {
    const translated = translateOpencode(parsed.value)
    if (translated.unknown.length > 0) problems.push(`${file}: ${translated.unknown.join(", ")}`)
    value = translated.config
  }
  let kept: unknown = value
  if (!options.trusted) {
    const stripped = stripUntrusted(value)
    items.push(...stripped.items)
    dropped.push(...droppedAllowRules(value, file))
    kept = stripped.value
  } else envResolved.push(...envReferences(value).map((name) => ({ name, value: options.env[name] ?? "" })))
  const substituted =
    format === "opencode"
      ? yield* substitute(parsed, kept, { env: options.env, home: options.places.home, trusted: options.trusted })
      : { value: kept, ignored: [] }
  items.push(...substituted.ignored.map((name) => ({ name })))
  const data: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(isObject(substituted.value) ? substituted.value : {})) {
    const checked = yield* Effect.result(validate(parsed, { [key]: item }, configFileSchemaFor({ [key]: item })))
    if (checked._tag === "Success") Object.assign(data, checked.success)
    else problems.push(`${checked.failure.message.split("\n")[0]} (left out)`)
  }
  return { parsed, data: data as ConfigFile, rules, items, dropped, problems, envResolved }
})
