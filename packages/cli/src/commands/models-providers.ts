/**
 * What `lathe models` prints with no provider named: every provider, not every model. Yours first (configured, or set
 * up by a key variable or `lathe auth login`) with where the key comes from; then the providers Lathe ships, with the
 * variables their key is read from, set or not, and how to sign in; then the other providers of the models.dev
 * catalogue, the same way, or why Lathe cannot drive one. Never a key.
 */
import type { CatalogProvider, ConfiguredProvider } from "@lathe/core"
import { descriptorOf, PROVIDERS, type ProviderDescriptor } from "@lathe/core/providers"
import type { CliIO } from "../io.js"

/** `NAME (set)`, `NAME (not set)`, for each variable. */
const variablesText = (io: CliIO, names: ReadonlyArray<string>): string =>
  names.map((name) => `${name} (${io.env[name] ? "set" : "not set"})`).join(", ")

/** How a shipped or catalogue provider is set up: its key variables (or server), and its account sign-in if any. */
const setupText = (io: CliIO, descriptor: ProviderDescriptor): string => {
  if (descriptor.unsupported !== undefined)
    return `cannot be used: Lathe does not include ${descriptor.catalogue?.npm || "the package it needs"} (lathe models ${descriptor.type} says what to do)`
  const names = descriptor.auth === "ambient" ? (descriptor.detectEnv ?? descriptor.keyEnv) : descriptor.keyEnv
  const variables = variablesText(io, names)
  const server = descriptor.baseURL?.required
    ? "your server's URL in provider.<id>.baseURL (LATHE_BASE_URL for one run)"
    : `server ${descriptor.baseURL?.default ?? "?"}`
  const signIn = descriptor.signIn && `sign in: lathe auth login ${descriptor.type} (${descriptor.signIn.label})`
  // An account sign-in with no key variable is the way in: a key in lathe.json is not what to suggest first.
  if (signIn !== undefined && variables === "") return signIn
  const text =
    descriptor.auth !== "optional"
      ? variables || `provider.${descriptor.type}.apiKey in lathe.json`
      : `${server}, key optional${variables ? `: ${variables}` : ""}`
  return signIn === undefined ? text : `${text}; ${signIn}`
}

/** One line per provider, ids padded to one column. */
const table = (rows: ReadonlyArray<readonly [id: string, text: string]>): ReadonlyArray<string> => {
  const width = Math.max(0, ...rows.map(([id]) => id.length))
  return rows.map(([id, text]) => `  ${id.padEnd(width)}  ${text}`)
}

/**
 * The provider listing. `yours`: the person's providers with `keyText` (where each key comes from); `catalogue`: the
 * catalogue's providers (the loaded catalogue, refreshed or shipped).
 */
export const providerListText = (
  io: CliIO,
  yours: ReadonlyArray<ConfiguredProvider>,
  keyText: (provider: ConfiguredProvider) => string,
  catalogue: ReadonlyArray<CatalogProvider>
): string => {
  const mine = new Set(yours.map((provider) => provider.id))
  const shipped = PROVIDERS.filter((descriptor) => !mine.has(descriptor.type))
  const shippedCatalogIDs = new Set(PROVIDERS.map((descriptor) => descriptor.catalogID))
  const shippedIDs = new Set(PROVIDERS.flatMap((descriptor) => [descriptor.type, ...(descriptor.aliases ?? [])]))
  const others = catalogue.filter(
    (provider) => !mine.has(provider.id) && !shippedCatalogIDs.has(provider.id) && !shippedIDs.has(provider.id)
  )
  const catalogueRows = others.map((provider): readonly [string, string] => {
    const descriptor = descriptorOf(provider.id)
    // A provider a refreshed catalogue added after this Lathe's snapshot: reachable as OpenAI-compatible.
    if (descriptor === undefined)
      return [
        provider.id,
        `${provider.name}: set it up as "type": "openai-compatible" with its OpenAI-style URL as baseURL` +
          (provider.api ? ` (models.dev: ${provider.api})` : "")
      ]
    return [provider.id, `${provider.name}: ${setupText(io, descriptor)}`]
  })
  const usable = others.filter((provider) => descriptorOf(provider.id)?.unsupported === undefined).length
  const lines: Array<string> = []
  if (yours.length === 0)
    lines.push("No provider is set up yet. The providers Lathe ships, with the variables their key is read from:")
  else {
    lines.push("Your providers:")
    lines.push(...table(yours.map((provider) => [provider.id, `${provider.descriptor.name}: ${keyText(provider)}`])))
    lines.push("", "The other providers Lathe ships, with the variables their key is read from:")
  }
  lines.push(
    ...table(shipped.map((descriptor) => [descriptor.type, `${descriptor.name}: ${setupText(io, descriptor)}`]))
  )
  lines.push(
    "",
    `The other providers of the models.dev catalogue (${usable} of ${others.length} usable: a key variable set is ` +
      "enough for lathe run -m <provider>/<model>):",
    ...table(catalogueRows),
    "",
    "Set one of those variables, run `lathe auth login <provider>`, or type /connect in the UI (`lathe`).",
    `lathe models <provider> lists one provider's models; lathe models --all lists every model of the ${catalogue.length} providers in the catalogue.`,
    ""
  )
  return lines.join("\n")
}
