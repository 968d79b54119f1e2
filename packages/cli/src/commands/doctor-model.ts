import {
  Config,
  type ConfigShape,
  type ConfiguredProvider,
  configAdvice,
  configuredProviders,
  LLM,
  lookupModel,
  type ModelInfo,
  providerSetupHelp,
  referencedProvider,
  renderSnippet
} from "@lathe/core"
import { Effect, Layer, Result } from "effect"
import type { CliIO } from "../io.js"

/** One line of `lathe doctor`'s report (the shape `doctor.ts` prints). */
export interface ModelCheck {
  readonly name: string
  readonly ok: boolean
  readonly detail: string
}

/** How long the endpoint probe waits for any HTTP answer. */
const PROBE_TIMEOUT_MS = 3_000

/** Where the first-party providers answer when neither config nor their descriptor names a `baseURL`. */
const DEFAULT_BASE_URLS: Readonly<Record<string, string>> = {
  anthropic: "https://api.anthropic.com/v1",
  openai: "https://api.openai.com/v1"
}

/** The provider `providerID` as the LLM layer sets it up (configured, detected, or a local server by reference). */
const providerOf = (config: ConfigShape, providerID: string, env: CliIO["env"]): ConfiguredProvider | undefined =>
  configuredProviders(config.info, env).find((provider) => provider.id === providerID) ??
  referencedProvider(providerID, env)

/** Where the key of `provider` comes from, by name only (never the value). */
const keySource = (provider: ConfiguredProvider | undefined, providerID: string): string => {
  const source = provider?.keySource ?? "none"
  if (source === "config") return `key from provider.${providerID}.apiKey`
  if (source === "auth") return "key stored by lathe auth login"
  if (source === "ambient") return "credentials from the environment (the SDK's own chain)"
  if (source.startsWith("env:")) return `key from ${source.slice(4)}`
  return provider?.descriptor.auth === "key"
    ? "no key"
    : `no key (none needed for ${provider?.descriptor.type === "openai-compatible" || provider === undefined ? "an openai-compatible server" : provider.descriptor.name})`
}

/** The model line's detail for a resolved model: the reference, where its key comes from, what Lathe knows of it. */
const describe = (config: ConfigShape, info: ModelInfo, env: CliIO["env"]): string => {
  const ref = `${info.providerID}/${info.modelID}`
  const key = keySource(providerOf(config, info.providerID, env), info.providerID)
  const override = config.info.provider?.[info.providerID]?.models?.[info.modelID]
  if (override !== undefined || lookupModel(info.modelID) !== undefined)
    return `${ref} (${info.name}, ${info.limit.context.toLocaleString("en")}-token context), ${key}`
  return (
    `${ref}, ${key}; not in Lathe's model catalogue: Lathe assumes a ${info.limit.context.toLocaleString("en")}-token ` +
    `context and no price; if that is wrong, merge this into lathe.json (prices in USD per million tokens): ` +
    renderSnippet(configAdvice.modelLimits(info.providerID, info.modelID))
  )
}

/** Why a request got no HTTP answer, in a few words. */
const whyUnreachable = (error: unknown): string => {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error
  const code = (cause as { code?: unknown } | undefined)?.code
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError"))
    return `no answer within ${PROBE_TIMEOUT_MS / 1000} s`
  if (code === "ECONNREFUSED") return "connection refused"
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return "host name not found"
  if (typeof code === "string") return code
  return cause instanceof Error ? cause.message : String(cause)
}

/** A GET on `<baseURL>/models` (free on every provider; no completion is sent): any HTTP answer means reachable. */
const endpointCheck = async (config: ConfigShape, providerID: string, env: CliIO["env"]): Promise<ModelCheck> => {
  const provider = providerOf(config, providerID, env)
  const baseURL = provider?.settings.baseURL ?? DEFAULT_BASE_URLS[provider?.descriptor.type ?? providerID]
  if (baseURL === undefined && provider !== undefined && provider.descriptor.baseURL?.required !== true)
    return {
      name: "endpoint",
      ok: true,
      detail: `${provider.descriptor.name}: its SDK picks the endpoint (not probed)`
    }
  if (baseURL === undefined)
    return { name: "endpoint", ok: false, detail: `provider "${providerID}" has no baseURL to reach` }
  const url = `${baseURL.replace(/\/+$/, "")}/models`
  const where = providerID === "env" ? "LATHE_BASE_URL" : `provider.${providerID}.baseURL in lathe.json`
  try {
    const response = await fetch(url, { method: "GET", signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) })
    await response.body?.cancel()
    return { name: "endpoint", ok: true, detail: `${baseURL} answered (HTTP ${response.status} to GET /models)` }
  } catch (error) {
    const connect = provider?.descriptor.hints?.connect
    return {
      name: "endpoint",
      ok: false,
      detail:
        `${baseURL} is not reachable (${whyUnreachable(error)}): start the model server, or fix ${where}, ` +
        `or check the network and proxy${connect && provider?.descriptor.type !== "openai-compatible" ? ` (${connect})` : ""}`
    }
  }
}

/**
 * The checks for the model a run would use, resolved exactly as `lathe run` resolves it (the LLM layer's `resolve`
 * on this config and environment): is one configured and does its provider have the key it needs (by name), does
 * its endpoint answer, does Lathe know its limits. `help` is the provider set-up text, when no usable model was
 * found.
 */
export const modelChecks = async (
  config: ConfigShape,
  io: CliIO
): Promise<{ readonly checks: ReadonlyArray<ModelCheck>; readonly help: string | undefined }> => {
  const resolved = await Effect.runPromise(
    Effect.gen(function* () {
      const llm = yield* LLM
      return yield* Effect.result(llm.resolve())
    }).pipe(Effect.provide(LLM.layerWith(io.env).pipe(Layer.provide(Layer.succeed(Config, config)))))
  )
  if (Result.isFailure(resolved)) {
    const error = resolved.failure
    // Settings an untrusted project set and Lathe ignored: the message itself says what to do, without the guide.
    const untrusted = error._tag === "ProviderNotConfigured" && error.untrusted === true
    const first = untrusted ? error.message.replace("\n", " ") : (error.message.split("\n")[0] ?? error.message)
    const help = error._tag === "ProviderNotConfigured" && !untrusted ? providerSetupHelp : undefined
    const tail = help === undefined ? "" : " (how to set one up is below)"
    return { checks: [{ name: "model", ok: false, detail: `${first}${tail}` }], help }
  }
  const info = resolved.success
  const model: ModelCheck = { name: "model", ok: true, detail: describe(config, info, io.env) }
  return { checks: [model, await endpointCheck(config, info.providerID, io.env)], help: undefined }
}
