/**
 * `/connect`: sets up a model provider from inside the interactive session, as a few questions in one dialog
 * (choose the provider, then its key or URL, then the model). Pure steps: the app draws the current one and feeds it
 * keys; the last answer gives the `ProviderSetup` the controller writes to the person's own config.
 */
import { catalogModelsOf, configuredProviders, descriptorDefaultModel } from "@lathe/core"
import { type DiscoveredModel, descriptorOf, PROVIDERS, type ProviderDescriptor } from "@lathe/core/providers"
import { keySetting, type ProviderSetup } from "../connect-config.js"
import { discoverModels } from "../provider-status.js"
import type { Style } from "../style.js"
import { listPanel, rule } from "./panels.js"

/** One choice of a list step. */
export interface ConnectItem {
  readonly label: string
  readonly detail?: string
  readonly value: string
}

/** The question on screen: pick from a list (type to filter), or type an answer (Enter keeps `fallback`). */
export type ConnectStep =
  | {
      readonly kind: "choose"
      readonly title: string
      readonly items: ReadonlyArray<ConnectItem>
      readonly filter: string
      readonly index: number
    }
  | {
      readonly kind: "input"
      readonly title: string
      readonly value: string
      /** Used when the answer is empty; shown as a hint. */
      readonly fallback: string
      /** Typed characters are drawn as `*` (a key). */
      readonly secret: boolean
      /** Why the last answer was refused. */
      readonly problem?: string
    }

/** The dialog: the answers so far and the question on screen. */
export interface ConnectFlow {
  readonly answers: Readonly<Record<string, string>>
  /** Which answer the step on screen asks for. */
  readonly field: "provider" | "key" | "keep" | "url" | "model"
  readonly step: ConnectStep
  /**
   * Set while the model question waits for the server's own list (`GET <baseURL>/models` for an OpenAI-compatible
   * server, the local server's listing for Ollama and LM Studio): the caller runs `askServer` and hands the outcome
   * to `serverAnswered`. Meanwhile a model id can be typed.
   */
  readonly pending?: { readonly provider: string; readonly baseURL: string }
}

/** How long `/connect` waits for a server's list of models before asking for the id instead. */
const DISCOVER_TIMEOUT_MS = 5_000

/** The providers `/connect` offers: every provider Lathe ships, in the registry's order (its type, then its name). */
export const connectProviders = (): ReadonlyArray<ConnectItem> =>
  PROVIDERS.map((descriptor) => ({
    label: descriptor.type,
    detail:
      descriptor.type === "openai-compatible"
        ? "vLLM, llama.cpp, a gateway or any OpenAI-style server: a base URL"
        : descriptor.auth === "key"
          ? `${descriptor.name}, with an API key`
          : descriptor.auth === "ambient"
            ? `${descriptor.name}, with the credentials its SDK finds`
            : `${descriptor.name}, a local server`,
    value: descriptor.type
  }))

/** Where a typed key goes: `lathe auth`'s store, or the config file. */
const KEEP_ITEMS: ReadonlyArray<ConnectItem> = [
  { label: "store it with lathe auth", detail: "auth.json in the data directory, yours only (0600)", value: "auth" },
  { label: "write it into lathe.json", detail: "your config file, then made yours only (0600)", value: "config" }
]

const DEFAULT_URL = "http://127.0.0.1:11434/v1"

const choose = (title: string, items: ReadonlyArray<ConnectItem>): ConnectStep => ({
  kind: "choose",
  title,
  items,
  filter: "",
  index: 0
})

const input = (title: string, fallback: string, secret = false): Extract<ConnectStep, { kind: "input" }> => ({
  kind: "input",
  title,
  value: "",
  fallback,
  secret
})

/** The first question: which provider. */
export const startConnect = (): ConnectFlow => ({
  answers: {},
  field: "provider",
  step: choose("Which provider? (↑↓, type to filter, Enter)", connectProviders())
})

/** The list items a choose step shows, after its filter. */
export const visibleItems = (step: Extract<ConnectStep, { kind: "choose" }>): ReadonlyArray<ConnectItem> =>
  step.items.filter((item) => item.label.toLowerCase().includes(step.filter.toLowerCase()))

/** The model question: the catalogue's models (the default first), or a model id to type when it has none. */
const modelStep = (descriptor: ProviderDescriptor): ConnectStep => {
  const ids = catalogModelsOf(descriptor.catalogID)
  // The catalogue's current flagship of the provider's family (`descriptor.defaultModel` before the catalogue loads).
  const preferred = descriptorDefaultModel(descriptor)
  if (ids.length === 0 && preferred === undefined) return input("Model id", "")
  const ordered = preferred ? [preferred, ...ids.filter((m) => m !== preferred)] : ids
  return choose(
    "Which model?",
    ordered.map((m) => ({ label: m, value: m }))
  )
}

const isHttpUrl = (text: string): boolean => {
  try {
    return ["http:", "https:"].includes(new URL(text).protocol)
  } catch {
    return false
  }
}

/**
 * Takes the answer to the step on screen: the next flow, or the finished setup. A refused answer (not a URL) keeps
 * the step, with the problem shown.
 */
export const answerConnect = (
  flow: ConnectFlow,
  answer: string
): { readonly flow: ConnectFlow } | { readonly done: ProviderSetup } => {
  const answers = { ...flow.answers, [flow.field]: answer }
  const provider = answers.provider ?? ""
  const compatible = provider === "openai-compatible"
  const descriptor = compatible ? undefined : descriptorOf(provider)
  const local = compatible || descriptor?.auth === "optional"
  const defaultURL = descriptor?.baseURL?.default ?? DEFAULT_URL
  const next = (field: ConnectFlow["field"], step: ConnectStep) => ({ flow: { answers, field, step } })
  switch (flow.field) {
    case "provider": {
      if (local) return next("url", input("Base URL of the server (Enter for the default)", defaultURL))
      if (descriptor?.auth === "ambient") return next("model", modelStep(descriptor))
      const variable = descriptor?.keyEnv[0] ?? ""
      const title = "API key, or the name of the variable that holds it"
      return next("key", input(variable === "" ? title : `${title} (Enter: ${variable})`, variable, true))
    }
    case "url":
      if (!isHttpUrl(answer))
        return {
          flow: {
            ...flow,
            step: { ...input(flow.step.title, defaultURL), problem: `"${answer}" is not an http(s) URL.` }
          }
        }
      // The server is asked which models it has; its answer replaces this step (see `serverAnswered`).
      if ((descriptor ?? descriptorOf("openai-compatible"))?.discover !== undefined)
        return {
          flow: {
            answers,
            field: "model",
            step: input(`Asking ${answer.replace(/\/+$/, "")}/models which models it has… (or type a model id)`, ""),
            pending: { provider, baseURL: answer }
          }
        }
      return next("model", descriptor ? modelStep(descriptor) : input("Model id the server serves", ""))
    case "model":
      if (answer.trim() === "")
        return { flow: { ...flow, step: { ...flow.step, problem: "Type the id of the model to use." } as ConnectStep } }
      if (compatible)
        return next("key", input("API key or the variable that holds it (Enter: none, for a local server)", "", true))
      break
    case "key": {
      const key = keySetting(answer)
      // A key itself, not a variable's name: ask where it goes.
      if (key !== undefined && "value" in key)
        return next("keep", choose("Where should Lathe keep this key? (↑↓, Enter)", KEEP_ITEMS))
      if (descriptor) return next("model", modelStep(descriptor))
      break
    }
    case "keep":
      if (descriptor) return next("model", modelStep(descriptor))
      break
  }
  const typed = keySetting(answers.key ?? "")
  const key = typed !== undefined && "value" in typed && answers.keep === "auth" ? { store: typed.value } : typed
  return {
    done: {
      id: compatible ? "local" : provider,
      type: descriptor?.type ?? "openai-compatible",
      model: answers.model ?? "",
      ...(local ? { baseURL: answers.url ?? defaultURL } : {}),
      ...(key ? { key } : {})
    }
  }
}

/**
 * Asks the server of `pending` (see `ConnectFlow.pending`) which models it has, with no key (the key is asked after
 * the model), waiting at most `timeoutMs`. Never rejects: a failure is the reason, in words.
 */
export const askServer = async (
  pending: NonNullable<ConnectFlow["pending"]>,
  env: Readonly<Record<string, string | undefined>>,
  timeoutMs: number = DISCOVER_TIMEOUT_MS
): Promise<{ readonly models: ReadonlyArray<DiscoveredModel> } | { readonly problem: string }> => {
  const type = pending.provider === "openai-compatible" ? "openai-compatible" : pending.provider
  // The provider as the config `/connect` writes would set it up, with no key: its SDK settings and discovery.
  const [status] = configuredProviders({ provider: { connect: { type, baseURL: pending.baseURL } } }, env, {
    stored: {}
  })
  if (status?.descriptor.discover === undefined) return { models: [] }
  return discoverModels({ ...status.settings, apiKey: undefined }, status.descriptor, timeoutMs)
}

/**
 * The model question once the server answered: its models to choose from (a typed id stays, when one was typed
 * meanwhile), else the catalogue's (Ollama, LM Studio) or a model id to type, with why the server did not list any.
 * `flow` unchanged when it is no longer waiting.
 */
export const serverAnswered = (
  flow: ConnectFlow,
  found: { readonly models: ReadonlyArray<DiscoveredModel> } | { readonly problem: string }
): ConnectFlow => {
  const { pending, ...rest } = flow
  if (pending === undefined || flow.field !== "model") return flow
  const typed = flow.step.kind === "input" && flow.step.value !== ""
  const where = `${pending.baseURL.replace(/\/+$/, "")}/models`
  if ("models" in found && found.models.length > 0) {
    if (typed) return rest
    const title = `Which model? (${found.models.length} listed by ${where}; ↑↓, type to filter, Enter)`
    return {
      ...rest,
      step: choose(
        title,
        found.models.map((model) => ({ label: model.id, value: model.id }))
      )
    }
  }
  // fetchJSON's reasons name the URL ("The server answered <url> with HTTP 401."); the key is asked after the model.
  const why =
    "problem" in found
      ? `${found.problem.replace(/\.$/, "")}${/HTTP 40[13]\b/.test(found.problem) ? " (the key is asked next)" : ""}`
      : `${where} lists no models`
  const descriptor = descriptorOf(pending.provider)
  if (
    descriptor !== undefined &&
    pending.provider !== "openai-compatible" &&
    catalogModelsOf(descriptor.catalogID).length > 0
  ) {
    if (typed) return rest
    const step = modelStep(descriptor)
    return { ...rest, step: step.kind === "choose" ? { ...step, title: `${why}. Which model?` } : step }
  }
  const step = flow.step.kind === "input" ? flow.step : input("Model id the server serves", "")
  return { ...rest, step: { ...step, title: "Model id the server serves", problem: `${why}. Type the model id.` } }
}

/** What a key does to the dialog: a new flow, the finished setup, `cancel` (Esc), or nothing. */
export type ConnectKey =
  | { readonly flow: ConnectFlow }
  | { readonly done: ProviderSetup }
  | { readonly cancel: true }
  | undefined

/** The keys the dialog takes (Ink's key flags, only those it reads). */
export interface ConnectKeyFlags {
  readonly escape?: boolean
  readonly return?: boolean
  readonly upArrow?: boolean
  readonly downArrow?: boolean
  readonly backspace?: boolean
  readonly delete?: boolean
  readonly ctrl?: boolean
  readonly meta?: boolean
}

/** One key press (or pasted text, as `input`) in the dialog. */
export const connectKey = (flow: ConnectFlow, input: string, key: ConnectKeyFlags): ConnectKey => {
  const step = flow.step
  if (key.escape) return { cancel: true }
  if (step.kind === "choose") {
    const items = visibleItems(step)
    if (key.upArrow) return { flow: { ...flow, step: { ...step, index: Math.max(0, step.index - 1) } } }
    if (key.downArrow)
      return { flow: { ...flow, step: { ...step, index: Math.min(items.length - 1, step.index + 1) } } }
    if (key.return) {
      const item = items[step.index]
      return item ? answerConnect(flow, item.value) : undefined
    }
    if (key.backspace || key.delete)
      return { flow: { ...flow, step: { ...step, filter: step.filter.slice(0, -1), index: 0 } } }
    if (input && !key.ctrl && !key.meta)
      return { flow: { ...flow, step: { ...step, filter: step.filter + input, index: 0 } } }
    return undefined
  }
  if (key.return) return answerConnect(flow, step.value.trim() || step.fallback)
  if (key.backspace || key.delete) return { flow: { ...flow, step: { ...step, value: step.value.slice(0, -1) } } }
  if (input && !key.ctrl && !key.meta)
    return { flow: { ...flow, step: { ...step, value: step.value + input.replace(/[\r\n]+/g, "") } } }
  return undefined
}

/** The dialog's lines, drawn where the editor is: the question, then the list or the typed answer. */
export const connectPanel = (flow: ConnectFlow, width: number, style: Style): Array<string> => {
  const step = flow.step
  const lines = [rule(width, style, `${style.bold("/connect")} ${style.dim("Enter · Esc cancels")}`), step.title]
  if (step.kind === "choose") {
    lines.push(`${style.cyan("filter:")} ${step.filter}${style.inverse(" ")}`)
    lines.push(...listPanel(visibleItems(step), step.index, width, style, 10))
    return lines
  }
  const shown = step.secret ? "*".repeat(step.value.length) : step.value
  const hint = step.value === "" && step.fallback !== "" ? style.dim(` ${step.fallback}`) : ""
  lines.push(`${style.cyan(">")} ${shown}${style.inverse(" ")}${hint}`)
  if (step.problem) lines.push(style.red(step.problem))
  return lines
}
