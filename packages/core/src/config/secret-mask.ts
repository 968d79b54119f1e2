/**
 * Masking secrets in text Lathe shows or stores: by value (every credential Lathe holds, see `secretValues`) and, for
 * error text a server wrote, by shape (an echoed `Authorization: Bearer …` or `x-api-key: …` header, a `?key=`
 * parameter, a well-known key prefix). One function, {@link secretMasker}, used by `lathe config`, provider errors
 * and the session writer.
 */

import { isSecretName, MIN_CONTAINED_SECRET } from "@lathe/plugin/host"
import { Context, Effect, Layer } from "effect"
import { storedKeys } from "./auth-store.js"
import { Config } from "./config.js"
import { secretValues } from "./secret-values.js"

/**
 * How a secret is shown: its first 3 and last 4 characters around `…` when it has at least 24 (`sk-…abcd`, enough to
 * tell two keys apart), else `***`.
 */
export const maskOf = (value: string): string =>
  value.length >= 24 ? `${value.slice(0, 3)}…${value.slice(-4)}` : "***"

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** A value's spellings that may appear in text: itself, JSON-escaped and URL-encoded. */
const spellings = (value: string): Array<string> => {
  const json = JSON.stringify(value).slice(1, -1)
  let url = value
  try {
    url = encodeURIComponent(value)
  } catch {}
  return [...new Set([value, json, url])]
}

/**
 * Header, parameter and field names whose value is a credential, as a server echoes them (`Authorization: Bearer x`,
 * `"x-api-key":"x"`, `?key=x`, `api_key=x`): the name and separator are kept, the value is masked. A scheme word
 * (`Bearer`, `Basic`, `Token`) is kept too.
 */
const CREDENTIAL_FIELD =
  /((?:proxy-)?authorization|x-api-key|x-goog-api-key|api[-_]?key|x-auth-token|access[-_]token|client[-_]secret|password|secret)(["']?\s*[:=]\s*["']?)((?:bearer|basic|token|bot)\s+)?([^\s"',;&}<>]+)/gi
/** A bare `Bearer <token>` anywhere in the text. */
const BEARER = /\b(bearer\s+)([A-Za-z0-9._~+/=-]{8,})/gi
/** A `key=` query parameter (Google's API keys travel so). */
const KEY_PARAM = /([?&](?:key|token)=)([^&\s"'#]+)/gi
/** Keys by their well-known prefixes (OpenAI, Anthropic, Groq, xAI, Google, GitHub, Hugging Face, OpenRouter). */
const KEY_PREFIX = /\b(?:sk-(?:ant-|proj-|or-)?|gsk_|xai-|AIza|ghp_|gho_|github_pat_|hf_)[A-Za-z0-9_-]{16,}/g

/** Masks credential-shaped spans of `text` (see {@link secretMasker}'s `shapes`). */
const maskShapes = (text: string): string =>
  text
    .replace(CREDENTIAL_FIELD, (_match, name: string, sep: string, scheme: string | undefined, value: string) =>
      value.includes("…") || value === "***" ? _match : `${name}${sep}${scheme ?? ""}${maskOf(value)}`
    )
    .replace(BEARER, (match, scheme: string, value: string) =>
      value.includes("…") || value === "***" ? match : `${scheme}${maskOf(value)}`
    )
    .replace(KEY_PARAM, (_match, name: string, value: string) => `${name}${maskOf(value)}`)
    .replace(KEY_PREFIX, (value) => maskOf(value))

/** What {@link secretMasker} masks besides the known values. */
export interface MaskOptions {
  /** Also mask credential shapes (header echoes, `?key=`, well-known key prefixes): for error text a server wrote. */
  readonly shapes?: boolean
}

/**
 * A function that replaces, in a text, every known secret of at least {@link MIN_CONTAINED_SECRET} characters (also
 * JSON-escaped or URL-encoded) with {@link maskOf} of it, longest first, and with `shapes` also credential-shaped spans.
 * Shorter values are left alone: a dummy key such as `"none"` must not mask the word everywhere. Built once for a
 * list of secrets; a text without any is returned as it is.
 */
export const secretMasker = (secrets: ReadonlyArray<string>, options: MaskOptions = {}): ((text: string) => string) => {
  const masks = new Map<string, string>()
  for (const secret of secrets)
    if (secret.length >= MIN_CONTAINED_SECRET)
      for (const spelling of spellings(secret)) if (!masks.has(spelling)) masks.set(spelling, maskOf(secret))
  const known =
    masks.size === 0
      ? undefined
      : new RegExp(
          [...masks.keys()]
            .sort((a, b) => b.length - a.length)
            .map(escapeRegExp)
            .join("|"),
          "g"
        )
  return (text) => {
    const byValue = known === undefined ? text : text.replace(known, (found) => masks.get(found) ?? "***")
    return options.shapes === true ? maskShapes(byValue) : byValue
  }
}

/** `text` with the known `secrets` masked, and with `shapes` the credential shapes too (see {@link secretMasker}). */
export const maskSecrets = (text: string, secrets: ReadonlyArray<string>, options: MaskOptions = {}): string =>
  secretMasker(secrets, options)(text)

const isPlainObject = (value: object): value is Record<string, unknown> => {
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/**
 * `value` with `mask` applied to every string inside it (arrays and plain objects, at any depth; keys are kept). What
 * `mask` leaves unchanged keeps its identity, so a value without secrets is returned as it is.
 */
export const maskDeep = <A>(value: A, mask: (text: string) => string): A => {
  const walk = (item: unknown): unknown => {
    if (typeof item === "string") return mask(item)
    if (typeof item !== "object" || item === null) return item
    if (Array.isArray(item)) {
      let changed = false
      const out = item.map((entry) => {
        const next = walk(entry)
        if (next !== entry) changed = true
        return next
      })
      return changed ? out : item
    }
    if (!isPlainObject(item)) return item
    let out: Record<string, unknown> | undefined
    for (const [key, entry] of Object.entries(item)) {
      const next = walk(entry)
      if (next !== entry) {
        out ??= { ...item }
        out[key] = next
      }
    }
    return out ?? item
  }
  return walk(value) as A
}

/** `text` with the password of every `scheme://user:password@` in it shown as `***`. */
const maskUrlPasswords = (text: string) =>
  text.replace(
    /([a-z][a-z0-9+.-]*:\/\/[^\s/?#@:]*:)([^\s/?#@]+)(@)/gi,
    (_match, head: string, _pw, at: string) => `${head}***${at}`
  )

/** A value under `key` in a credential-holding block, masked when the key names a secret (or under `headers`). */
const maskFields = (value: unknown, secret: boolean): unknown => {
  if (typeof value === "string") return secret ? maskOf(value) : maskUrlPasswords(value)
  if (Array.isArray(value)) return value.map((item) => maskFields(item, secret))
  if (typeof value !== "object" || value === null) return value
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      key,
      maskFields(item, secret || isSecretName(key) || key.toLowerCase() === "headers")
    ])
  )
}

/**
 * The config as `lathe config` shows it: in the credential-holding blocks (`provider`, `mcp`, `store`) every value
 * under a secret-looking key (`apiKey`, `clientSecret`, …) or in `headers` shown as {@link maskOf}, whatever its
 * length, and URL passwords as `***`. Values that are secrets by value (`{env:}` results in any field, MCP `env`) are
 * masked by a {@link secretMasker} over the printed text.
 */
export const maskConfig = <A extends { readonly provider?: unknown; readonly mcp?: unknown; readonly store?: unknown }>(
  info: A
): A => {
  const out: Record<string, unknown> = { ...info }
  for (const key of ["provider", "mcp", "store"] as const) if (key in out) out[key] = maskFields(out[key], false)
  return out as A
}

/**
 * The secrets of a run, masked wherever sessions are stored and announced (see `SessionWriter`). `values` masks the
 * known secret values only (for what the person or the model produced); `errors` masks credential shapes too (for error
 * text a server or tool wrote). The list of secrets is gathered on first use, never at start-up.
 */
export class SecretMask extends Context.Service<
  SecretMask,
  {
    /** `text` with every known secret value masked. */
    readonly values: (text: string) => string
    /** `text` with every known secret value and every credential shape masked. */
    readonly errors: (text: string) => string
  }
>()("@lathe/core/SecretMask") {
  /** Masks from a list gathered once, on first use. */
  static readonly make = (secrets: () => ReadonlyArray<string>): SecretMask["Service"] => {
    let values: ((text: string) => string) | undefined
    let errors: ((text: string) => string) | undefined
    return SecretMask.of({
      values: (text) => {
        values ??= secretMasker(secrets())
        return values(text)
      },
      errors: (text) => {
        errors ??= secretMasker(secrets(), { shapes: true })
        return errors(text)
      }
    })
  }

  /**
   * The secrets of `Config` and `env` (see `secretValues`: provider keys and headers, `{env:}` values, the store URL,
   * MCP credentials, provider key variables) and the keys `lathe auth login` stored.
   */
  static readonly layerWith = (
    env: Readonly<Record<string, string | undefined>>
  ): Layer.Layer<SecretMask, never, Config> =>
    Layer.effect(
      SecretMask,
      Effect.map(Config, (config) =>
        SecretMask.make(() => [...secretValues(config, env), ...Object.values(storedKeys(env))])
      )
    )

  /** Masks exactly `secrets`. */
  static readonly layerTest = (secrets: ReadonlyArray<string>): Layer.Layer<SecretMask> =>
    Layer.succeed(
      SecretMask,
      SecretMask.make(() => secrets)
    )
}
