import type { LanguageModelV4 } from "@ai-sdk/provider"
import type { CredentialStore, SignInMethod } from "./sign-in.js"

/**
 * One provider Lathe can talk to, described once: how it authenticates, where it listens, which SDK builds its
 * models, what it takes (images, reasoning, prompt caching) and how a person fixes it. Config, the LLM service,
 * error messages, prompts, `lathe models`, `lathe auth` and `/connect` all read this, so a new provider is one file
 * in this folder (plus its line in `registry.ts`) and its test.
 */
export interface ProviderDescriptor {
  /** The config `type` (`"anthropic"`, `"google"`, `"amazon-bedrock"`, …). Unique. */
  readonly type: string
  /** The name people know it by ("Google Gemini"). */
  readonly name: string
  /**
   * Provider ids that mean this type when config leaves `type` out (`provider.gemini` → google). `type` itself
   * always does.
   */
  readonly aliases?: ReadonlyArray<string>
  /** The models.dev provider id whose catalogue rows (limits, prices, abilities) this provider's models take. */
  readonly catalogID: string
  /**
   * How a request is authorised:
   * - `"key"`: an API key is required — from config `apiKey`, else the first variable of `keyEnv` that is set, else
   *   `lathe auth login <type>`;
   * - `"optional"`: a key is sent when there is one (local servers);
   * - `"ambient"`: the SDK finds credentials itself (AWS credential chain, Google application default credentials);
   *   `missing` says what is not set up.
   */
  readonly auth: "key" | "optional" | "ambient"
  /** Variables holding the key, in the order they are read; the one the SDK documents first. May be empty. */
  readonly keyEnv: ReadonlyArray<string>
  /**
   * For `"ambient"` (and any provider needing more than a key, such as Azure's resource name): what is missing for a
   * request to work, worded as the fix ("set AWS_REGION"), or `undefined` when it can be tried.
   */
  readonly missing?: (settings: ProviderSettings) => string | undefined
  /**
   * Variables whose presence makes this provider usable without a `provider` block in config (a key variable, or for
   * ambient providers their project/region variables). Default: `keyEnv`. Local servers list none: they are used when
   * referenced (`ollama/qwen3`) or configured.
   */
  readonly detectEnv?: ReadonlyArray<string>
  /** Where requests go: the default base URL, whether config must give one, and a variable that overrides it. */
  readonly baseURL?: {
    readonly default?: string
    readonly required?: boolean
    readonly env?: string
  }
  /**
   * Signing in with an account instead of a key (`lathe auth login <type>` runs it): the stored sign-in reaches `load`
   * as `settings.credential` (and its long-lived token as `apiKey`). Only where the provider allows third-party tools.
   */
  readonly signIn?: SignInMethod
  /**
   * The model used when this provider is the only one set up and config names no model, when the catalogue gives
   * none by `defaultFamily` (see `catalog/default-model.ts`): a fallback, not the usual answer.
   */
  readonly defaultModel?: string
  /**
   * The ids of this provider's flagship coding family in the catalogue (`/^claude-sonnet-/`): the default model is the
   * newest of them (`catalog/default-model.ts`). Without it, every model of `catalogID` is a candidate.
   */
  readonly defaultFamily?: RegExp
  /**
   * Set on a descriptor built from a models.dev entry (`catalog-provider.ts`): the AI SDK package models.dev names for
   * it.
   */
  readonly catalogue?: { readonly npm: string }
  /**
   * Why Lathe cannot drive this provider, worded with the fix: a catalogue provider whose AI SDK package Lathe does not
   * include. Config, `lathe models` and a run say it instead of asking for a key that would do nothing.
   */
  readonly unsupported?: string
  /** Whether tool results may carry images; when false, images move to a user message after the results. */
  readonly imagesInToolResults: boolean
  /** Which base system prompt suits a model of this provider. */
  readonly prompt: PromptFamily | ((modelID: string) => PromptFamily)
  /** How prompt caching is asked for on this provider (per model: Bedrock caches only some families). */
  readonly cache?: (modelID: string) => CacheStrategy | undefined
  /**
   * Provider options (keyed by the SDK's options name) that ask `model` to reason as `reasoning` says. Called only
   * when the model reasons (its catalogue entry or config says so) and a setting is asked for.
   */
  readonly reasoning?: (model: ReasoningTarget, reasoning: ReasoningSetting) => ProviderOptions
  /** Builds the SDK model, importing the SDK package lazily (`await import(...)`) so only used SDKs load. */
  readonly load: (settings: ProviderSettings, modelID: string) => Promise<LanguageModelV4>
  /** The models a running local server offers (`/api/tags`, `/v1/models`), for `lathe models` and `/models`. */
  readonly discover?: (settings: ProviderSettings) => Promise<ReadonlyArray<DiscoveredModel>>
  /** How a person fixes things, for error messages and `lathe doctor`. */
  readonly hints?: {
    /** How to get or set a key ("create one at https://…"), shown with the variable names and `lathe auth login`. */
    readonly key?: string
    /** What to check when the endpoint cannot be reached ("is `ollama serve` running?"). */
    readonly connect?: string
  }
  /**
   * The provider's own web search for a model (run by the provider, its results streamed back): the AI SDK
   * provider-defined tool, by id and arguments, that `LLM` sends under the name `web_search` when a step may search
   * (see `LLMRequest.nativeSearch`). `undefined` for a model without one.
   */
  readonly nativeSearch?: (modelID: string) => NativeTool | undefined
}

/** An AI SDK provider-defined tool as plain data: `anthropic.web_search_20250305` and its arguments. */
export interface NativeTool {
  readonly id: `${string}.${string}`
  readonly args: Readonly<Record<string, unknown>>
}

/** The base prompt family for a model. */
export type PromptFamily = "anthropic" | "openai" | "gemini" | "generic"

/**
 * Prompt caching on a provider: explicit breakpoints (Anthropic-family models: the `mark` is merged into the
 * provider options of the last tool, the last system message and the last two messages — `{ anthropic: {
 * cacheControl: { type: "ephemeral" } } }`, Bedrock's `{ bedrock: { cachePoint: { type: "default" } } }`), or a
 * per-session key (OpenAI's `promptCacheKey`), or nothing to do (automatic caching).
 */
export type CacheStrategy =
  | { readonly kind: "breakpoints"; readonly mark: ProviderOptions }
  | { readonly kind: "session-key"; readonly options: (sessionID: string) => ProviderOptions }

/** Provider options as the ai SDK takes them: SDK options name → options. */
export type ProviderOptions = Readonly<Record<string, Readonly<Record<string, unknown>>>>

/** How hard to reason: a level or a token budget (see `reasoning.ts`). */
export type ReasoningSetting = "low" | "medium" | "high" | { readonly budget: number }

/** What a `reasoning` mapping may know about the model (a `ModelInfo` fits). */
export interface ReasoningTarget {
  readonly modelID: string
  readonly limit: { readonly context: number; readonly output: number }
  readonly capabilities: { readonly reasoning: boolean }
}

/** The environment a provider reads (keys, regions, projects). */
export type ProviderEnv = Readonly<Record<string, string | undefined>>

/** A provider as set up for one run: config merged with the environment and stored keys. */
export interface ProviderSettings {
  /** The provider id in config (`"anthropic"`, `"work-gateway"`); the descriptor's `type` when not configured. */
  readonly id: string
  /** The key: config `apiKey`, else `keyEnv`, else `lathe auth`. */
  readonly apiKey: string | undefined
  /** Config `baseURL`, else the `baseURL.env` variable, else `baseURL.default`. */
  readonly baseURL: string | undefined
  readonly headers: Readonly<Record<string, string>> | undefined
  /** Config `options`, passed to the SDK factory as they are (they win over what Lathe sets). */
  readonly options: Readonly<Record<string, unknown>>
  readonly env: ProviderEnv
  /** The fetch every SDK gets (Node's HTTP client, see `http-fetch.ts`), unless `options.fetch` is given. */
  readonly fetch: typeof fetch
  /** The stored sign-in of a provider with `signIn` (read it; store a renewed one), when it has one. */
  readonly credential?: CredentialStore
}

/** A model a local server reports. */
export interface DiscoveredModel {
  readonly id: string
  readonly name?: string
  /** Context window, when the server says. */
  readonly context?: number
}
