import { descriptorFor } from "./registry.js"

/** `A`, `A (or B)`, `A (or B, C)`: the variables a key may come from, the documented one first. */
export const keyVariables = (names: ReadonlyArray<string>): string => {
  const [first, ...rest] = names
  if (first === undefined) return ""
  return rest.length === 0 ? first : `${first} (or ${rest.join(", ")})`
}

/**
 * How a person gives provider `providerID` (of config type `type`, when it is not the id's own) a key, worded to follow
 * "To fix it, ": the key variables, `provider.<id>.apiKey` in lathe.json and `lathe auth login <id>` for a provider
 * whose id is a provider type; the config key (and the type's variables) for a custom id; `LATHE_API_KEY` for the
 * provider `LATHE_BASE_URL` sets up (`env`).
 */
export const keyHintFor = (providerID: string, type?: string): string => {
  if (providerID === "env") return "set LATHE_API_KEY to the key the server at LATHE_BASE_URL expects"
  const descriptor = descriptorFor(providerID, type)
  if (descriptor.signIn !== undefined) return `run \`lathe auth login ${providerID}\` to sign in`
  const variables = keyVariables(descriptor.keyEnv)
  if (variables === "") return `set provider.${providerID}.apiKey in lathe.json (for example "{env:MY_KEY}")`
  const own = type === undefined || type === descriptor.type
  if (own && descriptorFor(providerID) === descriptor)
    return (
      `set ${variables}, or provider.${providerID}.apiKey in lathe.json, ` +
      `or run \`lathe auth login ${providerID}\` to store one`
    )
  return `set provider.${providerID}.apiKey in lathe.json, or ${variables}`
}
