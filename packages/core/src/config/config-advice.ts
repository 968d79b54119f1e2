/**
 * The config snippets Lathe prints in its advice (notices, `lathe doctor`, errors, guides), as data: each builder
 * returns the object a person pastes into their `lathe.json`, typed as config input, and {@link renderSnippet} prints
 * it. Every snippet the host prints comes from a builder here, so a test loads each one through the real loader
 * ({@link configAdviceExamples}) and checks it does what the advice says. The snippets of the tools' own sections
 * (`sandbox`, `webfetch`) are the tools' (`toolsConfigAdvice` in `@lathe/tools`, loaded the same way by the CLI's test).
 */
import type { ConfigFileInput } from "./config-schema.js"

/** The limits the "not in the catalogue" advice suggests: a person edits them to their model's. */
const SUGGESTED_LIMITS = { context: 128_000, output: 8_192, cost: { input: 1, output: 4 } } as const

/** The builders of every snippet Lathe prints. */
export const configAdvice = {
  /**
   * A model's limits and price, for a model the catalogue does not know. For LATHE_BASE_URL's server (provider `env`)
   * the block applies whenever LATHE_BASE_URL is set, and is left alone when it is not.
   */
  modelLimits: (providerID: string, modelID: string): ConfigFileInput => ({
    provider: { [providerID]: { models: { [modelID]: SUGGESTED_LIMITS } } }
  }),
  /** Silences the "not in the catalogue" notice for every model. */
  modelNoticeOff: (): ConfigFileInput => ({ models: { notice: false } }),
  /** An OpenAI-style server as a named provider, and the model to use on it (the setup guide's option 3). */
  localProvider: (baseURL = "http://127.0.0.1:11434/v1", model = "qwen3-coder"): ConfigFileInput => ({
    model: `local/${model}`,
    provider: { local: { type: "openai-compatible", baseURL } }
  }),
  /** A rule allowing `pattern` for `permission` (what a person may add to approve an ask for good). */
  permissionAllow: (permission: string, pattern: string): ConfigFileInput => ({
    permission: { [permission]: { [pattern]: "allow" } }
  })
} as const

/** The name of one snippet builder. */
export type ConfigAdviceName = keyof typeof configAdvice

/**
 * One example of every snippet, with the environment it is meant for (e.g. LATHE_BASE_URL for provider `env`) and
 * the config a person already has beside it (the provider a model belongs to), for tests that load each through the
 * loader. Typed by builder name, so a new builder without an example does not compile.
 */
export const configAdviceExamples: {
  readonly [K in ConfigAdviceName]: ReadonlyArray<{
    readonly snippet: ConfigFileInput
    readonly env?: Readonly<Record<string, string>>
    readonly beside?: ConfigFileInput
  }>
} = {
  modelLimits: [
    // LATHE_BASE_URL's server, with and without LATHE_BASE_URL set: the advice the first trial followed.
    {
      snippet: configAdvice.modelLimits("env", "fake"),
      env: { LATHE_BASE_URL: "http://127.0.0.1:9/v1", LATHE_MODEL: "fake" }
    },
    { snippet: configAdvice.modelLimits("env", "fake") },
    // A provider the person configured in their file, and one whose id is its type.
    { snippet: configAdvice.modelLimits("local", "qwen3-coder"), beside: configAdvice.localProvider() },
    { snippet: configAdvice.modelLimits("ollama", "my-finetune") }
  ],
  modelNoticeOff: [{ snippet: configAdvice.modelNoticeOff() }],
  localProvider: [{ snippet: configAdvice.localProvider() }],
  permissionAllow: [
    { snippet: configAdvice.permissionAllow("sandbox_escape", "npm install *") },
    { snippet: configAdvice.permissionAllow("external_directory", "/tmp/*") }
  ]
}

/** A snippet on one line, as JSON a person pastes into `lathe.json`: the kit's, so plugins print advice alike. */
export { renderSnippet } from "@lathe/plugin"
