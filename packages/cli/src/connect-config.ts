/**
 * What `/connect` writes: one provider and the model to use, merged into the person's own config file (never a
 * project's), keeping the file's comments and other settings.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { configDir, type PathEnv, ProviderConfig, type ProviderType } from "@lathe/core"
import { authFile, storeKey } from "@lathe/core/providers"
import { applyEdits, type FormattingOptions, modify, type ParseError, parse, printParseErrorCode } from "jsonc-parser"
import type { CliIO } from "./io.js"

/** The person's config file: `lathe.jsonc` when it exists, else `lathe.json` (which may not exist yet). */
export const userConfigFile = (env: CliIO["env"]): string => {
  const dir = configDir(env)
  const jsonc = join(dir, "lathe.jsonc")
  return existsSync(jsonc) ? jsonc : join(dir, "lathe.json")
}

const FORMAT: FormattingOptions = { insertSpaces: true, tabSize: 2, eol: "\n" }

/** An environment variable name (`ANTHROPIC_API_KEY`), as opposed to a key itself. */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/**
 * The API key setting: the name of a variable that holds it (written as `{env:NAME}`), the key itself (written into
 * the config), or the key to store with `lathe auth` (`store`: never written into the config).
 */
export type KeySetting = { readonly env: string } | { readonly value: string } | { readonly store: string }

/** One provider as `/connect` sets it up. */
export interface ProviderSetup {
  /** The provider id in the config (`anthropic`, `openai`, `local`). */
  readonly id: string
  readonly type: ProviderType
  /** The model id, without the provider (`claude-sonnet-4-5`, `qwen3-coder`). */
  readonly model: string
  /** Where an openai-compatible server listens (`http://127.0.0.1:11434/v1`). */
  readonly baseURL?: string
  readonly key?: KeySetting
}

/** What was written: the file, and whether it holds a key itself (then only its owner may read it: mode 0600). */
export interface ConnectWritten {
  readonly file: string
  readonly literalKey: boolean
  /** Where the key went when it was stored with `lathe auth` (the auth file, mode 0600). */
  readonly storedIn?: string
}

/** Reads a key answer: a variable name becomes `{ env }`, anything else is the key; empty is no key. */
export const keySetting = (answer: string): { readonly env: string } | { readonly value: string } | undefined => {
  const text = answer.trim()
  if (text === "") return undefined
  return ENV_NAME.test(text) && text === text.toUpperCase() ? { env: text } : { value: text }
}

/**
 * Sets `model` to `<id>/<model>` and writes `provider.<id>` (type, baseURL, apiKey, the model under `models`) into
 * `file`, creating it (and its folder) when missing. Keys of `provider.<id>` it does not set stay as they were. A
 * literal key makes the file mode 0600; a key to `store` goes to `lathe auth`'s file for `env` (its data directory)
 * and the config gets no `apiKey`. Returns a message for the person, without writing, when the file is not a JSON(C)
 * object or the provider would be invalid.
 */
export const writeProviderSetup = (
  file: string,
  setup: ProviderSetup,
  env: PathEnv = process.env
): ConnectWritten | string => {
  const apiKey =
    setup.key === undefined || "store" in setup.key
      ? undefined
      : "env" in setup.key
        ? `{env:${setup.key.env}}`
        : setup.key.value.trim()
  const provider = {
    type: setup.type,
    ...(setup.baseURL !== undefined ? { baseURL: setup.baseURL } : {}),
    ...(apiKey !== undefined ? { apiKey } : {})
  }
  const checked = ProviderConfig.safeParse(provider)
  if (!checked.success)
    return `The provider settings are not valid: ${checked.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}.`
  const original = existsSync(file) ? readFileSync(file, "utf8") : ""
  let text = original.trim() === "" ? "{}\n" : original
  const errors: Array<ParseError> = []
  const value: unknown = parse(text, errors, { allowTrailingComma: true })
  const first = errors[0]
  if (first) {
    const line = text.slice(0, first.offset).split("\n").length
    return `${file}:${line}: ${printParseErrorCode(first.error)}. Fix the file, then run /connect again.`
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return `${file} does not hold a JSON object. Fix the file, then run /connect again.`
  const set = (path: Array<string>, next: unknown) => {
    text = applyEdits(text, modify(text, path, next, { formattingOptions: FORMAT }))
  }
  set(["model"], `${setup.id}/${setup.model}`)
  for (const [key, next] of Object.entries(provider)) set(["provider", setup.id, key], next)
  // A key stored with `lathe auth` would lose to an `apiKey` left in the file.
  if (setup.key !== undefined && "store" in setup.key) set(["provider", setup.id, "apiKey"], undefined)
  const models = (value as { provider?: Record<string, { models?: Record<string, unknown> }> }).provider?.[setup.id]
    ?.models
  if (setup.type === "openai-compatible" && models?.[setup.model] === undefined)
    set(["provider", setup.id, "models", setup.model], {})
  const literalKey = setup.key !== undefined && "value" in setup.key
  if (setup.key !== undefined && "store" in setup.key) {
    try {
      storeKey(setup.id, setup.key.store.trim(), env)
    } catch (error) {
      return `Could not store the key: ${error instanceof Error ? error.message : String(error)}. Nothing was written.`
    }
  }
  mkdirSync(dirname(file), { recursive: true })
  const mode = existsSync(file) ? statSync(file).mode & 0o777 : 0o644
  writeFileSync(file, text.endsWith("\n") ? text : `${text}\n`, { mode: literalKey ? 0o600 : mode })
  if (literalKey) chmodSync(file, 0o600)
  return { file, literalKey, ...(setup.key !== undefined && "store" in setup.key ? { storedIn: authFile(env) } : {}) }
}
