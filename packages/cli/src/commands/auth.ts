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

const loginSpec = defineCommand({
  name: "auth login",
  summary: "Store a provider's API key (asked without echo, or read from stdin)",
  usage: ["<provider> [--force]"],
  description: `<provider> is a provider type (anthropic, openai, google, …), one of its aliases, or a provider id from lathe.json.
Keys are stored in <data dir>/auth.json, readable by you only (mode 0600). A key in lathe.json (provider.<id>.apiKey)
wins over the provider's environment variable, which wins over the stored key.

  echo "$KEY" | lathe auth login openai     from a pipe: the first line, trimmed
  lathe auth login anthropic                 at a terminal: typed or pasted, never shown`,
  options: { force: { type: "boolean", description: "Store a key even for a provider that needs none" } },
  positionals: { name: "<provider>", min: 1, max: 1 }
})

const listSpec = defineCommand({
  name: "auth list",
  summary: "Every provider with a key, and where it comes from (keys masked)",
  options: { json: { type: "boolean", description: "Print them as JSON" } }
})

const logoutSpec = defineCommand({
  name: "auth logout",
  summary: "Remove a stored key",
  usage: ["<provider>"],
  positionals: { name: "<provider>", min: 1, max: 1 }
})

/** `lathe auth`, declared once for the command kit. */
export const authSpec = defineCommand({
  name: "auth",
  usage: ["login <provider> [--force]", "list [--json]", "logout <provider>"],
  description: `<provider> is a provider type (anthropic, openai, google, …), one of its aliases, or a provider id from lathe.json.
Keys are stored in <data dir>/auth.json, readable by you only (mode 0600). A key in lathe.json (provider.<id>.apiKey)
wins over the provider's environment variable, which wins over the stored key.`,
  subcommands: [loginSpec, listSpec, logoutSpec]
})

const ESC = "\u001b"

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
  const [target = ""] = parsed.positionals
  const resolved = resolveProvider(target, info)
  if (resolved === undefined) {
    io.stderr(`lathe auth: ${unknownProvider(target, info)}\n`)
    return 1
  }
  return login(io, info, resolved.id, resolved.descriptor, parsed.values.force === true)
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

const login = async (
  io: CliIO,
  info: ConfigInfo,
  id: string,
  descriptor: ProviderDescriptor,
  force: boolean
): Promise<number> => {
  if (descriptor.auth !== "key" && !force) {
    io.stdout(`${noKeyNeeded(id, descriptor)}\nNothing stored. To store a key anyway: lathe auth login ${id} --force\n`)
    return 0
  }
  const key = io.stdinIsTTY
    ? await readHidden(io, `API key for ${descriptor.name} (${id}), input hidden: `)
    : await readFirstLine(io.stdin)
  if (key === undefined) {
    io.stderr("lathe auth: cancelled; nothing stored.\n")
    return 1
  }
  if (key.trim() === "") {
    io.stderr(
      `lathe auth: no key given; nothing stored. Type it at the prompt, or pipe it: echo "$KEY" | lathe auth login ${id}\n`
    )
    return 1
  }
  try {
    storeKey(id, key.trim(), io.env)
  } catch (error) {
    io.stderr(`lathe auth: ${error instanceof Error ? error.message : String(error)}\n`)
    return 1
  }
  const lines = [`Stored the key for ${id} in ${authFile(io.env)} (readable by you only).`]
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
 * Reads a key typed at the terminal with nothing echoed but a `*` per character: Enter ends it, Backspace takes one
 * back, Ctrl-C or Ctrl-D (on an empty line) cancels (`undefined`). The terminal is left as it was found.
 */
const readHidden = (io: CliIO, prompt: string): Promise<string | undefined> =>
  new Promise((resolve) => {
    const input = io.stdin as NodeJS.ReadStream | undefined
    if (input === undefined) return resolve(undefined)
    const raw = typeof input.setRawMode === "function"
    let key = ""
    const finish = (value: string | undefined) => {
      input.off("data", onData)
      stopInterrupt?.()
      if (raw) input.setRawMode(false)
      input.pause()
      io.stderr("\n")
      resolve(value)
    }
    const onData = (chunk: Buffer | string) => {
      // Bracketed-paste markers are not part of the key.
      const text = chunk.toString().replaceAll(`${ESC}[200~`, "").replaceAll(`${ESC}[201~`, "")
      for (const char of text) {
        if (char === "\r" || char === "\n") return finish(key)
        if (char === "\x03" || (char === "\x04" && key === "")) return finish(undefined)
        if (char === "\x7f" || char === "\b") {
          if (key.length > 0) {
            key = key.slice(0, -1)
            io.stderr("\b \b")
          }
        } else if (char >= " ") {
          key += char
          io.stderr("*")
        }
      }
    }
    const stopInterrupt = io.onInterrupt?.(() => finish(undefined))
    // Raw mode before the prompt shows: nothing typed after it is echoed by the terminal.
    if (raw) input.setRawMode(true)
    io.stderr(prompt)
    input.on("data", onData)
    input.resume()
  })

/** The first line of a piped stdin (all of it when it has no line break); empty when there is no stdin. */
const readFirstLine = (input: NodeJS.ReadableStream | undefined): Promise<string> =>
  new Promise((resolve, reject) => {
    if (input === undefined) return resolve("")
    let text = ""
    const done = () => {
      input.off("data", onData)
      input.off("end", done)
      input.pause()
      resolve(text.split(/\r?\n/)[0] ?? "")
    }
    const onData = (chunk: Buffer | string) => {
      text += chunk.toString()
      if (text.includes("\n")) done()
    }
    input.on("data", onData)
    input.once("end", done)
    input.once("error", reject)
  })

/** One line of `lathe auth list --json`. */
export interface AuthListRow {
  readonly provider: string
  readonly name: string
  readonly type: string
  /** Where the key in use comes from. */
  readonly source: "config" | "env" | "auth" | "ambient" | "none"
  /** The variable the key is read from (`source` `env`); never its value. */
  readonly variable?: string
  /** The stored key, masked, also when a variable or config wins over it. */
  readonly stored?: string
  readonly ready: boolean
  readonly problem?: string
}

const list = (io: CliIO, info: ConfigInfo, json: boolean): number => {
  const read = readAuthFile(io.env)
  const stored = read.ok ? read.keys : {}
  const statuses = yourProviders(info, io.env, stored)
  const rows: Array<AuthListRow> = []
  for (const status of statuses) {
    const key = stored[status.id]
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
        stored: maskKey(key),
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
  const lines = [removed ? `Removed the stored key for ${id}.` : `No key was stored for ${id}; nothing to remove.`]
  const { [id]: _removed, ...left } = read.keys
  const status = providerStatus(id, info, io.env, left)
  if (status?.keySource === "config")
    lines.push(`lathe.json still sets provider.${id}.apiKey, so Lathe still has a key.`)
  else if (status?.keySource.startsWith("env:"))
    lines.push(`${status.keySource.slice(4)} is still set in your environment, so Lathe still has a key for ${id}.`)
  io.stdout(`${lines.join("\n")}\n`)
  return 0
}
