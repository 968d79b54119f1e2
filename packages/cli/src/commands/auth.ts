import { Config, ConfigError, type ConfigInfo, Paths } from "@lathe/core"
import {
  authFile,
  closeMatches,
  type ProviderDescriptor,
  readAuthFile,
  removeKey,
  storeKey
} from "@lathe/core/providers"
import { Effect, Layer } from "effect"
import { defineCommand, parseCommand, pickSubcommand } from "../command-kit.js"
import type { CliIO, Command } from "../io.js"
import { maskKey, providerNamesNear, providerStatus, resolveProvider, yourProviders } from "../provider-status.js"
import { pickLogin, saveBaseURL } from "./auth-picker.js"
import { readFirstLine, readHidden, readVisible } from "./auth-prompts.js"
import { signInBrowser, signInDevice } from "./auth-sign-in.js"
import { verifyKey } from "./auth-verify.js"

const loginSpec = defineCommand({
  name: "auth login",
  summary: "Sign in to a provider or store its API key (a searchable list when no provider is named)",
  usage: ["[provider] [--force] [--no-verify]"],
  description: `[provider] is a provider type (anthropic, openai, github-copilot, chatgpt, …), one of its aliases, or a provider id
from lathe.json. Without it, at a terminal, a searchable list of providers to choose from.
Keys are stored in <data dir>/auth.json, readable by you only (mode 0600). A key in lathe.json (provider.<id>.apiKey)
wins over the provider's environment variable, which wins over the stored key. At a terminal a key is checked with a
request that costs nothing (listing the models) before it is stored. GitHub Copilot and ChatGPT sign in with your
account instead (a code typed at github.com; a browser sign-in); their tokens are renewed as they expire.

  lathe auth login                           at a terminal: choose a provider, then sign in or type the key
  echo "$KEY" | lathe auth login openai     from a pipe: the first line, trimmed
  lathe auth login anthropic                 at a terminal: typed or pasted, never shown
  lathe auth login github-copilot            sign in with a GitHub account that has Copilot`,
  options: {
    force: { type: "boolean", description: "Store a key even for a provider that needs none" },
    "no-verify": { type: "boolean", description: "Store the key without checking it with the provider" }
  },
  positionals: { name: "[provider]", max: 1 }
})

const listSpec = defineCommand({
  name: "auth list",
  summary: "Every provider with a key, and where it comes from (keys masked)",
  options: { json: { type: "boolean", description: "Print them as JSON" } }
})

const logoutSpec = defineCommand({
  name: "auth logout",
  summary: "Remove a stored key or sign-in",
  usage: ["<provider>"],
  positionals: { name: "<provider>", min: 1, max: 1 }
})

/** `lathe auth`, declared once for the command kit. */
export const authSpec = defineCommand({
  name: "auth",
  usage: ["login [provider] [--force] [--no-verify]", "list [--json]", "logout <provider>"],
  description: `<provider> is a provider type (anthropic, openai, google, …), one of its aliases, or a provider id from lathe.json.
Keys are stored in <data dir>/auth.json, readable by you only (mode 0600). A key in lathe.json (provider.<id>.apiKey)
wins over the provider's environment variable, which wins over the stored key. GitHub Copilot and ChatGPT sign in
with your account (lathe auth login github-copilot, lathe auth login chatgpt).`,
  subcommands: [loginSpec, listSpec, logoutSpec]
})

/** `lathe auth login|list|logout`: the API keys Lathe keeps for you. */
export const authCommand: Command = async (args, io) => {
  const sub = pickSubcommand(authSpec, args, io)
  if (typeof sub === "number") return sub
  if (sub.name === "list") {
    const parsed = parseCommand(listSpec, sub.rest, io)
    if (typeof parsed === "number") return parsed
    return list(io, await configInfo(io), parsed.values.json === true)
  }
  if (sub.name === "logout") {
    const parsed = parseCommand(logoutSpec, sub.rest, io)
    if (typeof parsed === "number") return parsed
    const info = await configInfo(io)
    const [target = ""] = parsed.positionals
    return logout(io, info, target, resolveProvider(target, info)?.id)
  }
  const parsed = parseCommand(loginSpec, sub.rest, io)
  if (typeof parsed === "number") return parsed
  const info = await configInfo(io)
  const options = { force: parsed.values.force === true, verify: parsed.values["no-verify"] !== true }
  const [target] = parsed.positionals
  if (target === undefined) {
    if (!io.stdinIsTTY) {
      io.stderr(
        "lathe auth login: name the provider (the list to choose from needs a terminal): lathe auth login <provider>, " +
          `for example lathe auth login anthropic. Providers: ${providerNamesNear("", info).join(", ")}.\n`
      )
      return 2
    }
    const picked = await pickLogin(io, info)
    if (picked === undefined) {
      io.stderr("lathe auth: cancelled; nothing stored.\n")
      return 1
    }
    if ("catalogue" in picked) return loginCatalogue(io, picked.catalogue, options.verify)
    return login(io, info, picked.id, picked.descriptor, { ...options, picked: true })
  }
  const resolved = resolveProvider(target, info)
  if (resolved === undefined) {
    io.stderr(`lathe auth: ${unknownProvider(target, info)}\n`)
    return 1
  }
  return login(io, info, resolved.id, resolved.descriptor, options)
}

/** "unknown provider", the likely meant ones, and every name `lathe auth` takes (close ones first). */
const unknownProvider = (name: string, info: ConfigInfo): string => {
  const names = providerNamesNear(name, info)
  const near = closeMatches(name, names, 3)
  return (
    `unknown provider "${name}".` +
    (near.length > 0 ? ` Did you mean ${near.join(" or ")}?` : "") +
    ` Known providers: ${names.join(", ")}.`
  )
}

/** The merged config; with a broken config, none (a key can still be stored for a shipped provider type). */
const configInfo = async (io: CliIO): Promise<ConfigInfo> => {
  const layer = Config.layerWith(io.env).pipe(Layer.provide(Paths.layer(io.cwd, io.env)))
  const program = Effect.gen(function* () {
    return (yield* Config).info
  })
  const result = await Effect.runPromise(Effect.result(Effect.provide(program, layer)))
  if (result._tag === "Success") return result.success
  const error = result.failure
  io.stderr(
    `lathe auth: ignoring the config (${error instanceof ConfigError ? error.message : String(error)}); only provider types are known\n`
  )
  return { permission: [], agent: {}, plugin: [], instructions: [] }
}

/** How `login` runs: `picked` when the person chose the provider from the list (then a missing base URL is asked). */
interface LoginOptions {
  readonly force: boolean
  readonly verify: boolean
  readonly picked?: boolean
}

const login = async (
  io: CliIO,
  info: ConfigInfo,
  id: string,
  descriptor: ProviderDescriptor,
  options: LoginOptions
): Promise<number> => {
  if (descriptor.unsupported !== undefined) {
    io.stderr(`lathe auth: ${descriptor.unsupported}\n`)
    return 1
  }
  if (descriptor.signIn !== undefined && !options.force) {
    if (descriptor.signIn.kind === "device") return signInDevice(io, id, descriptor)
    return signInBrowser(io, id, descriptor)
  }
  let baseURL = providerStatus(id, info, io.env)?.settings.baseURL
  if (options.picked && io.stdinIsTTY && baseURL === undefined) {
    const asked = await askBaseURL(io, id, descriptor)
    if (typeof asked === "number") return asked
    baseURL = asked
  }
  // A server of the person's own, chosen from the list, may want a key: asked, and none is fine.
  const optionalKey = options.picked === true && descriptor.auth === "optional" && descriptor.baseURL?.required === true
  if (descriptor.auth !== "key" && !options.force && !optionalKey) {
    const missing = providerStatus(id, info, io.env)?.problem
    io.stdout(
      `${noKeyNeeded(id, descriptor)}\n` +
        (missing === undefined ? "" : `${missing}\n`) +
        `Nothing stored. To store a key anyway: lathe auth login ${id} --force\n`
    )
    return 0
  }
  const key = io.stdinIsTTY
    ? await readHidden(
        io,
        `API key for ${descriptor.name} (${id})${optionalKey ? ", Enter for none" : ""}, input hidden: `
      )
    : await readFirstLine(io.stdin)
  if (key === undefined) {
    io.stderr("lathe auth: cancelled; nothing stored.\n")
    return 1
  }
  if (optionalKey && key.trim() === "") {
    io.stdout(`No key stored: ${descriptor.name} (${id}) is used without one.\n`)
    return 0
  }
  if (key.trim() === "") {
    io.stderr(
      `lathe auth: no key given; nothing stored. Type it at the prompt, or pipe it: echo "$KEY" | lathe auth login ${id}\n`
    )
    return 1
  }
  // At a terminal the key is checked first (a pipe is a script: it stores what it is given).
  let checked: string | undefined
  if (io.stdinIsTTY && options.verify) {
    const verdict = await verifyKey(descriptor, key.trim(), baseURL)
    if (verdict.kind === "rejected") {
      io.stderr(
        `lathe auth: ${descriptor.name} refused this key (HTTP ${verdict.status}); nothing stored. ` +
          `Check it and try again, or store it unchecked: lathe auth login ${id} --no-verify\n`
      )
      return 1
    }
    checked =
      verdict.kind === "verified"
        ? `Verified: ${descriptor.name} accepted the key (${verdict.models} models listed).`
        : `Not verified: ${verdict.reason}.`
  }
  try {
    storeKey(id, key.trim(), io.env)
  } catch (error) {
    io.stderr(`lathe auth: ${error instanceof Error ? error.message : String(error)}\n`)
    return 1
  }
  const lines = [
    ...(checked === undefined ? [] : [checked]),
    `Stored the key for ${id} in ${authFile(io.env)} (readable by you only).`
  ]
  const envKey = descriptor.keyEnv.find((variable) => io.env[variable])
  if (info.provider?.[id]?.apiKey)
    lines.push(`Note: lathe.json sets provider.${id}.apiKey, which wins over the stored key.`)
  else if (envKey !== undefined)
    lines.push(`Note: ${envKey} is set in your environment, and it wins over the stored key while it is set.`)
  io.stdout(`${lines.join("\n")}\n`)
  return 0
}

/** What an `optional` or `ambient` provider uses instead of a stored key. */
const noKeyNeeded = (id: string, descriptor: ProviderDescriptor): string => {
  if (descriptor.auth === "ambient") {
    const vars = descriptor.detectEnv ?? descriptor.keyEnv
    return (
      `${descriptor.name} (${id}) takes no key from Lathe: its SDK finds your credentials itself` +
      (vars.length > 0 ? ` (${vars.join(", ")}, and the usual credential files)` : "") +
      "." +
      (descriptor.hints?.key ? ` To set them up: ${descriptor.hints.key}.` : "")
    )
  }
  const where = descriptor.baseURL?.default
    ? `the server at ${descriptor.baseURL.default}`
    : `the server at provider.${id}.baseURL in lathe.json`
  const override = descriptor.baseURL?.env ? ` (or ${descriptor.baseURL.env})` : ""
  return `${descriptor.name} (${id}) needs no key: it talks to ${where}${override}, and sends a key only when one is set.`
}

/**
 * For a provider chosen from the list whose base URL is required and not set: asks for it and writes it into the
 * person's config (`provider.<id>.baseURL`). The URL written, `undefined` when none is needed, or an exit code.
 */
const askBaseURL = async (
  io: CliIO,
  id: string,
  descriptor: ProviderDescriptor
): Promise<string | number | undefined> => {
  if (!descriptor.baseURL?.required) return undefined
  const answer = await readVisible(io, `Base URL of ${descriptor.name} (for example http://127.0.0.1:8000/v1): `)
  if (answer === undefined || answer.trim() === "") {
    io.stderr("lathe auth: no base URL given; nothing stored.\n")
    return 1
  }
  const written = saveBaseURL(io, id, descriptor, answer.trim())
  if (typeof written === "string") {
    io.stderr(`lathe auth: ${written}\n`)
    return 1
  }
  io.stdout(`Wrote provider.${id}.baseURL to ${written.file}.\n`)
  return answer.trim()
}

/**
 * A catalogue provider with no descriptor of its own, chosen from the list: its key is checked against its `api`
 * when it speaks OpenAI's API, and stored under its id (where the provider built from the catalogue reads it).
 */
const loginCatalogue = async (
  io: CliIO,
  provider: { readonly id: string; readonly name: string; readonly env: ReadonlyArray<string>; readonly api?: string },
  verify: boolean
): Promise<number> => {
  const key = await readHidden(io, `API key for ${provider.name} (${provider.id}), input hidden: `)
  if (key === undefined || key.trim() === "") {
    io.stderr("lathe auth: no key given; nothing stored.\n")
    return 1
  }
  let checked: string | undefined
  if (verify && provider.api !== undefined) {
    const verdict = await verifyKey(
      { type: provider.id, name: provider.name, auth: "key" } as ProviderDescriptor,
      key.trim(),
      provider.api
    )
    if (verdict.kind === "rejected") {
      io.stderr(`lathe auth: ${provider.name} refused this key (HTTP ${verdict.status}); nothing stored.\n`)
      return 1
    }
    checked = verdict.kind === "verified" ? "Verified." : `Not verified: ${verdict.reason}.`
  }
  try {
    storeKey(provider.id, key.trim(), io.env)
  } catch (error) {
    io.stderr(`lathe auth: ${error instanceof Error ? error.message : String(error)}\n`)
    return 1
  }
  io.stdout(
    `${checked === undefined ? "" : `${checked}\n`}Stored the key for ${provider.id} in ${authFile(io.env)} (readable by you only).\n` +
      (provider.env[0] === undefined ? "" : `(${provider.env[0]} in your environment would win over it.)\n`)
  )
  return 0
}

/** One line of `lathe auth list --json`. */
export interface AuthListRow {
  readonly provider: string
  readonly name: string
  readonly type: string
  /** Where the key in use comes from. */
  readonly source: "config" | "env" | "auth" | "ambient" | "none"
  /** The variable the key is read from (`source` `env`); never its value. */
  readonly variable?: string
  /** The stored key, masked, also when a variable or config wins over it (never shown for a sign-in). */
  readonly stored?: string
  /** For an account sign-in (`lathe auth login github-copilot`, `chatgpt`): the account, when known, and when the
   * current access token expires (ISO time; it is renewed by itself). Never a token. */
  readonly signIn?: { readonly account?: string; readonly accessExpires?: string }
  readonly ready: boolean
  readonly problem?: string
}

const list = (io: CliIO, info: ConfigInfo, json: boolean): number => {
  const read = readAuthFile(io.env)
  const stored = read.ok ? read.keys : {}
  const signIns = read.ok ? read.signIns : {}
  const statuses = yourProviders(info, io.env, stored)
  const rows: Array<AuthListRow> = []
  const signInOf = (id: string): Pick<AuthListRow, "signIn"> => {
    const signIn = signIns[id]
    if (signIn === undefined) return {}
    return {
      signIn: {
        ...(signIn.accountId === undefined ? {} : { account: signIn.accountId }),
        ...(signIn.expires === undefined ? {} : { accessExpires: new Date(signIn.expires).toISOString() })
      }
    }
  }
  for (const status of statuses) {
    const key = signIns[status.id] === undefined ? stored[status.id] : undefined
    const [source, variable] = status.keySource.startsWith("env:")
      ? (["env", status.keySource.slice(4)] as const)
      : ([status.keySource as AuthListRow["source"], undefined] as const)
    rows.push({
      provider: status.id,
      name: status.descriptor.name,
      type: status.descriptor.type,
      source,
      ...(variable === undefined ? {} : { variable }),
      ...(key === undefined ? {} : { stored: maskKey(key) }),
      ...signInOf(status.id),
      ready: status.ready,
      ...(status.problem === undefined ? {} : { problem: status.problem })
    })
  }
  // Keys stored for an id that is no longer configured nor a provider type: shown so they can be removed.
  for (const [id, key] of Object.entries(stored))
    if (!statuses.some((status) => status.id === id))
      rows.push({
        provider: id,
        name: id,
        type: "unknown",
        source: "none",
        ...(signIns[id] === undefined ? { stored: maskKey(key) } : signInOf(id)),
        ready: false,
        problem: `not a provider type nor configured: lathe auth logout ${id} removes it`
      })
  if (!read.ok) io.stderr(`lathe auth: ${read.problem}\n`)
  if (json) {
    io.stdout(`${JSON.stringify(rows, null, 2)}\n`)
    return read.ok ? 0 : 1
  }
  if (rows.length === 0) {
    io.stdout("No provider has a key yet. lathe auth login <provider> stores one.\n")
    return read.ok ? 0 : 1
  }
  const width = Math.max(...rows.map((row) => row.provider.length))
  const nameWidth = Math.max(...rows.map((row) => row.name.length))
  for (const row of rows) {
    const where =
      row.source === "config"
        ? `lathe.json provider.${row.provider}.apiKey`
        : row.source === "env"
          ? `env ${row.variable}`
          : row.source === "auth" && row.signIn !== undefined
            ? `signed in${row.signIn.account === undefined ? "" : ` (account ${row.signIn.account})`}; tokens renew by themselves`
            : row.source === "auth"
              ? `stored ${row.stored} (lathe auth)`
              : row.source === "ambient"
                ? row.ready
                  ? "ambient credentials: ready"
                  : "ambient credentials"
                : row.stored !== undefined
                  ? `stored ${row.stored}`
                  : "no key"
    const unused =
      row.stored !== undefined && row.source !== "auth" && row.source !== "none" ? `; stored ${row.stored} unused` : ""
    const problem = row.problem === undefined ? "" : ` — ${row.problem}`
    io.stdout(`${row.provider.padEnd(width)}  ${row.name.padEnd(nameWidth)}  ${where}${unused}${problem}\n`)
  }
  return read.ok ? 0 : 1
}

const logout = (io: CliIO, info: ConfigInfo, target: string, resolvedID: string | undefined): number => {
  const read = readAuthFile(io.env)
  if (!read.ok) {
    io.stderr(`lathe auth: ${read.problem}\n`)
    return 1
  }
  // A key stored under exactly this name (even a provider no longer configured) goes; else the provider's own.
  const id = read.keys[target] !== undefined ? target : (resolvedID ?? target)
  let removed: boolean
  try {
    removed = removeKey(id, io.env)
  } catch (error) {
    io.stderr(`lathe auth: ${error instanceof Error ? error.message : String(error)}\n`)
    return 1
  }
  if (!removed && resolvedID === undefined) {
    io.stderr(`lathe auth: no key is stored for "${target}". ${unknownProvider(target, info)}\n`)
    return 1
  }
  const signedIn = read.signIns[id] !== undefined
  const lines = [
    removed
      ? signedIn
        ? `Signed out of ${id}: removed its stored sign-in (tokens included).`
        : `Removed the stored key for ${id}.`
      : `No key was stored for ${id}; nothing to remove.`
  ]
  const { [id]: _removed, ...left } = read.keys
  const status = providerStatus(id, info, io.env, left)
  if (status?.keySource === "config")
    lines.push(`lathe.json still sets provider.${id}.apiKey, so Lathe still has a key.`)
  else if (status?.keySource.startsWith("env:"))
    lines.push(`${status.keySource.slice(4)} is still set in your environment, so Lathe still has a key for ${id}.`)
  io.stdout(`${lines.join("\n")}\n`)
  return 0
}
