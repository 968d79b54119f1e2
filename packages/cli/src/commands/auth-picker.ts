/**
 * The list `lathe auth login` shows when no provider is named: the providers most people use first, then every other
 * provider Lathe ships, then the rest of the models.dev catalogue; and writing a base URL the person typed into their
 * own config.
 */
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { dirname } from "node:path"
import { type CatalogProvider, Config, type ConfigInfo, ModelCatalog, Paths } from "@lathe/core"
import { PROVIDERS, type ProviderDescriptor, storedKeys } from "@lathe/core/providers"
import { Effect, Layer } from "effect"
import { applyEdits, modify, parse } from "jsonc-parser"
import { userConfigFile } from "../connect-config.js"
import type { CliIO } from "../io.js"
import { providerStatus, resolveProvider } from "../provider-status.js"
import { type Choice, pickOne } from "./auth-prompts.js"

/** The providers listed first, in this order (the rest follow in registry order, then the catalogue's). */
const POPULAR = [
  "anthropic",
  "openai",
  "chatgpt",
  "github-copilot",
  "google",
  "openrouter",
  "amazon-bedrock",
  "google-vertex",
  "azure",
  "xai",
  "deepseek",
  "mistral",
  "groq",
  "ollama",
  "lmstudio"
]

/** What was chosen: a provider Lathe ships (or one of the person's config), or a catalogue provider. */
export type Picked =
  | { readonly id: string; readonly descriptor: ProviderDescriptor }
  | { readonly catalogue: CatalogProvider }

/** How a provider signs in, in a few words, for its row. */
const howOf = (descriptor: ProviderDescriptor, status: string): string => {
  const how =
    descriptor.unsupported !== undefined
      ? "not usable with Lathe (yet)"
      : descriptor.signIn !== undefined
        ? `sign in: ${descriptor.signIn.label}`
        : descriptor.auth === "ambient"
          ? "its own credentials (no key)"
          : descriptor.auth === "optional"
            ? descriptor.baseURL?.required
              ? "your server: its base URL, a key if it wants one"
              : "local server, no key needed"
            : descriptor.keyEnv[0] === undefined
              ? "API key"
              : `API key (${descriptor.keyEnv[0]})`
  return status === "" ? how : `${how} · ${status}`
}

/** The catalogue's providers (the shipped snapshot, or the refreshed copy); none when it cannot be read. */
const catalogueProviders = async (io: CliIO): Promise<ReadonlyArray<CatalogProvider>> => {
  const layer = ModelCatalog.layerWith(io.env).pipe(
    Layer.provideMerge(Config.layerWith(io.env)),
    Layer.provide(Paths.layer(io.cwd, io.env))
  )
  const program = Effect.gen(function* () {
    return yield* (yield* ModelCatalog).providers()
  }).pipe(Effect.provide(layer))
  const result = await Effect.runPromise(Effect.result(program))
  return result._tag === "Success" ? result.success : []
}

/** The rows of the list: popular, then the other shipped providers, then catalogue providers with no descriptor. */
export const loginChoices = (
  info: ConfigInfo,
  env: CliIO["env"],
  catalogue: ReadonlyArray<CatalogProvider>
): ReadonlyArray<Choice<Picked>> => {
  const stored = storedKeys(env)
  const rank = (descriptor: ProviderDescriptor) => {
    const at = POPULAR.indexOf(descriptor.type)
    return at === -1 ? POPULAR.length : at
  }
  // OpenAI-compatible (your own server) goes last of the shipped ones: it is the odd one, with no service behind it.
  const shipped = [...PROVIDERS].sort(
    (a, b) => Number(a.type === "openai-compatible") - Number(b.type === "openai-compatible") || rank(a) - rank(b)
  )
  const rows: Array<Choice<Picked>> = []
  const covered = new Set<string>()
  for (const descriptor of shipped) {
    const status = providerStatus(descriptor.type, info, env, stored)
    const state = status?.keySource === "none" || status === undefined ? "" : status.ready ? "set up" : "incomplete"
    rows.push({
      label: `${descriptor.name} (${descriptor.type})`,
      detail: howOf(descriptor, state),
      value: { id: descriptor.type, descriptor }
    })
    covered.add(descriptor.type)
    if (descriptor.signIn === undefined) covered.add(descriptor.catalogID)
  }
  // The person's own providers (a company gateway) come before the catalogue's.
  for (const id of Object.keys(info.provider ?? {})) {
    if (covered.has(id)) continue
    const resolved = resolveProvider(id, info)
    if (resolved === undefined) continue
    rows.push({ label: `${id} (your config)`, detail: howOf(resolved.descriptor, ""), value: resolved })
    covered.add(id)
  }
  for (const provider of [...catalogue].sort((a, b) => a.name.localeCompare(b.name))) {
    if (covered.has(provider.id)) continue
    // A catalogue provider the registry now knows (built from its entry) is driven by its descriptor.
    const resolved = resolveProvider(provider.id, info)
    rows.push({
      label: `${provider.name} (${provider.id})`,
      detail:
        resolved?.descriptor.signIn !== undefined || resolved?.descriptor.unsupported !== undefined
          ? howOf(resolved.descriptor, "")
          : `API key${provider.env[0] === undefined ? "" : ` (${provider.env[0]})`} · ${provider.models} models`,
      value: resolved ?? { catalogue: provider }
    })
  }
  return rows
}

/** Shows the list and returns the choice (`undefined`: cancelled). */
export const pickLogin = async (io: CliIO, info: ConfigInfo): Promise<Picked | undefined> => {
  const choices = loginChoices(info, io.env, await catalogueProviders(io))
  return pickOne(
    io,
    "Sign in to which provider? — type to search, ↑/↓ to move, Enter to choose, Esc to cancel",
    choices
  )
}

/**
 * Writes `provider.<id>.baseURL` (and its `type` when the id is not the type) into the person's own config, keeping
 * the file's comments and other settings. A message when the file cannot be edited.
 */
export const saveBaseURL = (
  io: CliIO,
  id: string,
  descriptor: ProviderDescriptor,
  baseURL: string
): { readonly file: string } | string => {
  try {
    new URL(baseURL)
  } catch {
    return `"${baseURL}" is not a URL (for example http://127.0.0.1:8000/v1); nothing written.`
  }
  const file = userConfigFile(io.env)
  const original = existsSync(file) ? readFileSync(file, "utf8") : ""
  let text = original.trim() === "" ? "{}\n" : original
  const value: unknown = parse(text, [], { allowTrailingComma: true })
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return `${file} does not hold a JSON object; fix it, then run lathe auth login again.`
  const format = { formattingOptions: { insertSpaces: true, tabSize: 2, eol: "\n" } }
  if (id !== descriptor.type) text = applyEdits(text, modify(text, ["provider", id, "type"], descriptor.type, format))
  text = applyEdits(text, modify(text, ["provider", id, "baseURL"], baseURL, format))
  mkdirSync(dirname(file), { recursive: true })
  const mode = existsSync(file) ? statSync(file).mode & 0o777 : 0o644
  writeFileSync(file, text.endsWith("\n") ? text : `${text}\n`, { mode })
  return { file }
}
