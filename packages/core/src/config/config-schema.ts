import { PermissionConfig } from "@lathe/plugin"
import { z } from "zod"
import { Reasoning } from "../provider/reasoning.js"
import { PROVIDER_TYPES } from "../provider/registry.js"

/**
 * A schema built on first use. Building these schemas is most of what loading this module costs (~20 M instructions,
 * a few ms before the first request, bench/loop-modules.ts), and most runs never parse a config file: a run with no
 * `lathe.json` and its model from the environment builds none of them. The value stands for the schema in every way
 * the code uses one (`parse`, `safeParse`, `optional`, `extend`, `instanceof`, nesting in other schemas).
 */
const lazySchema = <S extends object>(build: () => S): S => {
  let built: S | undefined
  const schema = (): S => {
    built ??= build()
    return built
  }
  return new Proxy({} as S, {
    get: (_, key) => Reflect.get(schema(), key),
    set: (_, key, value) => Reflect.set(schema(), key, value),
    has: (_, key) => Reflect.has(schema(), key),
    ownKeys: () => Reflect.ownKeys(schema()),
    getOwnPropertyDescriptor: (_, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(schema(), key)
      // A proxy may not report a property its (empty) target lacks as non-configurable.
      return descriptor === undefined ? undefined : { ...descriptor, configurable: true }
    },
    getPrototypeOf: () => Reflect.getPrototypeOf(schema())
  })
}

// Each schema's `error` is the human "expected …" text; the loader writes `<path>: expected <error>, got <value>`.
const says = (expected: string) => ({ error: expected })

const positiveInt = () =>
  z.number(says("a positive integer")).int(says("a positive integer")).positive(says("a positive integer"))
const nonNegativeInt = () =>
  z.number(says("an integer >= 0")).int(says("an integer >= 0")).min(0, says("an integer >= 0"))
const price = () => z.number(says("a number >= 0")).min(0, says("a number >= 0"))
const modelRef = () =>
  z.string(says('a string like "provider/model"')).includes("/", says('a string like "provider/model"'))
const options = () => z.record(z.string(), z.unknown())

/** `one of "anthropic", "openai", …`: the provider types, as a schema error and a config hint say them. */
export const providerTypesText = `one of ${PROVIDER_TYPES.map((type) => JSON.stringify(type)).join(", ")}`

/** The provider kinds Lathe can talk to: the `type` of every provider descriptor (`provider/registry.ts`). */
export const ProviderType = lazySchema(() =>
  z.enum(PROVIDER_TYPES as [string, ...Array<string>], says(providerTypesText))
)
/** The provider kinds Lathe can talk to (`PROVIDER_TYPES`). */
export type ProviderType = z.infer<typeof ProviderType>

const ModelEntry = lazySchema(() =>
  z.strictObject({
    name: z.string().optional(),
    /** Context window, in tokens. */
    context: positiveInt().optional(),
    /** Maximum output, in tokens. */
    output: positiveInt().optional(),
    /** USD per million tokens. */
    cost: z
      .strictObject({
        input: price(),
        output: price(),
        cache_read: price().optional(),
        cache_write: price().optional()
      })
      .optional(),
    reasoning: z
      .union([z.boolean(), Reasoning], { error: 'true, false, "low", "medium", "high", or { "budget": tokens }' })
      .optional(),
    tool_call: z.boolean().optional(),
    temperature: z.boolean().optional(),
    /** Whether the model takes images (tool results and attachments); otherwise it gets a short note instead. */
    image: z.boolean().optional()
  })
)

/** A validated model entry: `reasoning` is whether it reasons, `reasoning_effort` the setting it runs with. */
type ModelFields = Omit<z.output<typeof ModelEntry>, "reasoning"> & {
  readonly reasoning?: boolean
  readonly reasoning_effort?: Reasoning
}

/**
 * One model's limits, price and abilities, overriding the built-in catalogue. `reasoning` is `true`/`false` (whether
 * the model reasons) or the setting to run it with (`"low"`, `"medium"`, `"high"`, `{ "budget": tokens }`), which
 * also says it reasons; after validation the setting is in `reasoning_effort` and `reasoning` is a boolean.
 */
export const ModelConfig = lazySchema(() =>
  ModelEntry.transform(({ reasoning, ...fields }): ModelFields => {
    if (reasoning === undefined) return fields
    return typeof reasoning === "boolean"
      ? { ...fields, reasoning }
      : { ...fields, reasoning: true, reasoning_effort: reasoning }
  })
)
/** One model's limits, price and abilities. */
export type ModelConfig = z.infer<typeof ModelConfig>

/**
 * A provider. `type` may be left out only when the id is a provider type or one of its aliases (`anthropic`,
 * `google`, `gemini`, `ollama`, …; not `openai-compatible`, which needs a `baseURL`); the loader checks this on the
 * merged config, so a project file may add models to a provider the global file declares.
 */
export const ProviderConfig = lazySchema(() =>
  z.strictObject({
    type: ProviderType.optional(),
    name: z.string().optional(),
    baseURL: z.url({ protocol: /^https?$/, error: "an http(s) URL" }).optional(),
    apiKey: z.string().optional(),
    headers: z.record(z.string(), z.string(), says("an object of strings")).optional(),
    /** Passed to the provider's SDK as is. */
    options: options().optional(),
    models: z.record(z.string(), ModelConfig).optional()
  })
)
/** A provider as written in config. */
export type ProviderConfig = z.infer<typeof ProviderConfig>

/** An agent defined or adjusted in config. */
export const AgentConfig = lazySchema(() =>
  z.strictObject({
    description: z.string().optional(),
    mode: z.enum(["primary", "subagent", "all"], says('"primary", "subagent" or "all"')).optional(),
    hidden: z.boolean().optional(),
    disable: z.boolean().optional(),
    prompt: z.string().optional(),
    model: modelRef().optional(),
    temperature: z.number().optional(),
    top_p: z.number().optional(),
    /** How hard this agent's model reasons (reasoning models only); `lathe run --variant` overrides it for one run. */
    reasoning: Reasoning.optional(),
    /** Model calls per turn for this agent, overriding the top-level `max_steps`; 0 = no cap. */
    max_steps: nonNegativeInt().optional(),
    /** Tools on (`true`) or off (`false`) by id; wildcards allowed. */
    tools: z.record(z.string(), z.boolean(), says("an object of true/false")).optional(),
    permission: PermissionConfig.optional(),
    color: z.string().optional()
  })
)
/** An agent as written in config. */
export type AgentConfig = z.infer<typeof AgentConfig>

/** A plugin to load: a package name or path, or `[name, options]`. */
export const PluginSpec = lazySchema(() =>
  z.union([z.string(), z.tuple([z.string(), options()])], says('a plugin name, or ["name", { options }]'))
)
/** A plugin to load. */
export type PluginSpec = z.infer<typeof PluginSpec>

/** One host of `sandbox.network`'s list: `host`, `*.domain` or an address, with an optional `:port`. */
const SANDBOX_HOST =
  /^(?:\*\.[a-zA-Z0-9_-][a-zA-Z0-9_.-]*|\[[0-9a-fA-F:.]+\]|[a-zA-Z0-9_-][a-zA-Z0-9_.-]*)(?::\d{1,5})?$/

const SandboxObject = lazySchema(() =>
  z.strictObject({
    /** `workspace-write`: the project, the OS temp dir and Lathe's truncation dir; `read-only`: the temp dir only. */
    mode: z.enum(["workspace-write", "read-only", "off"], says('"workspace-write", "read-only" or "off"')).optional(),
    /**
     * Whether commands may reach the network (default false): `true` opens it whole; a list of hosts
     * (`"registry.npmjs.org"`, `"*.github.com"`, `"127.0.0.1:8080"`, `"[::1]:8080"`; no port means 80 and 443) opens
     * only those, through a proxy Lathe runs for each command (bubblewrap only; elsewhere a list keeps it closed).
     */
    network: z
      .union(
        [
          z.boolean(),
          z.array(
            z
              .string()
              .regex(
                SANDBOX_HOST,
                says('a host like "registry.npmjs.org", "*.github.com", "127.0.0.1:8080" or "[::1]:8080"')
              ),
            says("an array of hosts")
          )
        ],
        says('true, false, or an array of hosts like ["registry.npmjs.org", "*.github.com"]')
      )
      .optional(),
    /** Refuse bash when no sandbox is available (default false: rely on the permission rules). */
    required: z.boolean().optional()
  })
)

/**
 * The sandbox bash runs in: a mode string, `"required"` (refuse bash where no sandbox can run), or an object
 * `{ mode, network, required }`. Both forms come out as the object, so sources merge key by key (a project's
 * `"required"` keeps the global mode). Defaults: `workspace-write`, network closed, not required.
 */
export const SandboxConfig = lazySchema(() =>
  z.union(
    [
      z
        .enum(["workspace-write", "read-only", "off", "required"])
        .transform(
          (value): z.output<typeof SandboxObject> => (value === "required" ? { required: true } : { mode: value })
        ),
      SandboxObject
    ],
    says('"workspace-write", "read-only", "off", "required", or an object with mode / network / required')
  )
)
/** The sandbox settings after validation (the string shorthand expanded). */
export type SandboxConfig = z.output<typeof SandboxConfig>

const stringMap = () => z.record(z.string(), z.string(), says("an object of strings"))

/** An MCP server Lathe starts itself and talks to over stdio. */
export const McpLocalConfig = lazySchema(() =>
  z.strictObject({
    type: z.literal("local", says('"local" or "remote"')),
    /** The program and its arguments, e.g. `["npx", "-y", "@modelcontextprotocol/server-everything"]`. */
    command: z.array(z.string(), says('an array of strings, e.g. ["npx", "-y", "my-mcp-server"]')).min(1, {
      error: 'a non-empty array of strings, e.g. ["npx", "-y", "my-mcp-server"]'
    }),
    /** Extra environment variables (`{env:VAR}` works here). */
    env: stringMap().optional(),
    /** The working directory, relative to the project root. */
    cwd: z.string().optional(),
    /** `false` keeps the server configured but not started (default true). */
    enabled: z.boolean().optional(),
    /** How long to wait for it to start, in ms (default 10000). */
    timeout: positiveInt().optional(),
    /** `true`: a run waits for this server (up to `timeout`) before its first model request (default false). */
    wait: z.boolean().optional()
  })
)

const CLIENT_METADATA_URL =
  "an https URL with a path, where the client ID metadata document is served (e.g. https://example.com/lathe/client.json)"

/** An MCP server reached over HTTP: Streamable HTTP, falling back to SSE. */
export const McpRemoteConfig = lazySchema(() =>
  z.strictObject({
    type: z.literal("remote", says('"local" or "remote"')),
    url: z.url({ protocol: /^https?$/, error: "an http(s) URL" }),
    /** Extra request headers (`{env:VAR}` works here). */
    headers: stringMap().optional(),
    /** OAuth settings, or `false` to never try OAuth (default: OAuth when the server asks for it). */
    oauth: z
      .union(
        [
          z.literal(false),
          z.strictObject({
            clientId: z.string().optional(),
            clientSecret: z.string().optional(),
            scope: z.string().optional(),
            /** A client ID metadata document (an https URL with a path) to use as the client_id where the server takes one. */
            clientMetadataUrl: z
              .url({ protocol: /^https$/, error: CLIENT_METADATA_URL })
              .refine((url) => URL.canParse(url) && new URL(url).pathname !== "/", says(CLIENT_METADATA_URL))
              .optional()
          })
        ],
        says("false, or an object with clientId / clientSecret / scope / clientMetadataUrl")
      )
      .optional(),
    enabled: z.boolean().optional(),
    timeout: positiveInt().optional(),
    wait: z.boolean().optional()
  })
)

/** One MCP server in config: `local` (a command) or `remote` (a URL). */
export const McpServerConfig = lazySchema(() =>
  z.discriminatedUnion("type", [McpLocalConfig, McpRemoteConfig], {
    error: 'an object with "type": "local" (and "command") or "type": "remote" (and "url")'
  })
)
/** One MCP server in config. */
export type McpServerConfig = z.infer<typeof McpServerConfig>

const postgresUrl = () =>
  z
    .string(says("a postgres:// URL"))
    .regex(/^postgres(ql)?:\/\/\S+$/, says("a postgres:// URL, like postgres://user:password@host:5432/database"))

/**
 * Where sessions are kept: `{ "type": "sqlite" }` (the default: a file in the data directory) or
 * `{ "type": "postgres", "url": "postgres://…" }` (a database several machines can share, through `@lathe/store-pg`).
 * Global config and `LATHE_STORE` may choose it; a project's files only once the folder is trusted.
 */
export const StoreConfig = lazySchema(() =>
  z.discriminatedUnion(
    "type",
    [
      z.strictObject({ type: z.literal("sqlite") }),
      z.strictObject({ type: z.literal("postgres"), url: postgresUrl() })
    ],
    { error: 'an object with "type": "sqlite", or "type": "postgres" and a "url"' }
  )
)
/** Where sessions are kept. */
export type StoreConfig = z.infer<typeof StoreConfig>

/**
 * Shell hooks in Claude Code's shape, by event (`PreToolUse`, `PostToolUse`, `UserPromptSubmit`, `Stop`,
 * `SessionStart`, `Notification`): a list of `{ "matcher": "Bash|Edit", "hooks": [{ "type": "command", "command": "…",
 * "timeout": 30 }] }` (`timeout` in seconds). `@lathe/hooks` runs them; other keys of an entry are left for it to judge.
 */
export const HooksConfig = lazySchema(() =>
  z.record(
    z.string(),
    z.array(
      z.looseObject({
        matcher: z.string(says("a regular expression over tool names")).optional(),
        hooks: z.array(
          z.looseObject({
            type: z.string(says('"command"')),
            command: z.string(says("a shell command")).optional(),
            timeout: z.number(says("a number of seconds")).positive(says("a number of seconds > 0")).optional()
          }),
          says('an array of { "type": "command", "command": "…" }')
        )
      }),
      says('an array of { "matcher": "…", "hooks": [ … ] }')
    ),
    says('an object of event names, e.g. { "PreToolUse": [ … ] }')
  )
)
/** Shell hooks by event, as written in config. */
export type HooksConfig = z.infer<typeof HooksConfig>

/**
 * The schema of each key of a `lathe.json` / `lathe.jsonc` file, built on first use: a file is checked with the
 * schemas of the keys it has (`configFileSchemaFor`), and building all of them (`ConfigFile`) cost a one-line
 * `lathe.json` ~3.5 ms of the first request (profiled; docs/loop-performance.md).
 */
const configFields = {
  $schema: () => z.string().optional(),
  /** The default model, `provider/model`. */
  model: () => modelRef().optional(),
  /** A cheaper model for titles and summaries, `provider/model`. */
  small_model: () => modelRef().optional(),
  default_agent: () => z.string().optional(),
  provider: () => z.record(z.string(), ProviderConfig).optional(),
  permission: () => PermissionConfig.optional(),
  agent: () => z.record(z.string(), AgentConfig).optional(),
  plugin: () => z.array(PluginSpec).optional(),
  /** MCP servers by name; their tools are `<name>_<tool>`. An untrusted project's servers are not started. */
  mcp: () => z.record(z.string(), McpServerConfig).optional(),
  /**
   * The share of the model's context window (0–1, default 0.1) MCP tool definitions may take before they are no
   * longer all sent and the model finds them with `mcp_search` instead; `false` always sends them all.
   */
  mcp_tool_search: () =>
    z
      .union(
        [z.literal(false), z.number().min(0, says("a number from 0 to 1")).max(1, says("a number from 0 to 1"))],
        says("a number from 0 to 1, or false")
      )
      .optional(),
  /**
   * How long after the MCP servers start a turn's first request may wait for those still starting, in ms (default
   * 10000 for `lathe run`, 2000 in the interactive UI; 0 never waits). A server the prompt or the agent names, or
   * marked `wait: true`, is waited for up to its own start timeout; a server that fails holds nothing up.
   */
  mcp_startup_wait: () => nonNegativeInt().optional(),
  /** Built-in plugins not to load, by package name (e.g. "@lathe/tools"). */
  disabled_plugins: () => z.array(z.string(), says("an array of package names")).optional(),
  /** How long a plugin hook may run, in ms, before it is reported and skipped (default 30000). */
  plugin_timeout_ms: () => positiveInt().optional(),
  /** Shell hooks with Claude Code's contract (see {@link HooksConfig}); an untrusted project's do not run. */
  hooks: () => HooksConfig.optional(),
  /**
   * Globs or paths of extra rules files (relative to the project root), or `https://` URLs (`http://` for loopback
   * hosts) fetched and cached an hour (`remote-instructions.ts`); an untrusted project's stay inside it, no URLs.
   */
  instructions: () => z.array(z.string(), says("an array of strings")).optional(),
  /**
   * The most model calls (steps) one turn may make (default 200; an agent's `max_steps` overrides it; 0 = no cap).
   * The last one offers no tools and asks for a summary; the turn then ends with a `StepLimit` error.
   */
  max_steps: () => nonNegativeInt().optional(),
  /**
   * Cost caps in USD, counted at the models' prices: `max_cost` per turn (its subagents included; `lathe run
   * --max-cost` overrides it), `max_session_cost` for a whole session. A turn stops before a model call its
   * remaining budget cannot cover. An untrusted project may only lower them.
   */
  budget: () =>
    z
      .strictObject({
        max_cost: z.number(says("a number > 0 (USD)")).positive(says("a number > 0 (USD)")).optional(),
        max_session_cost: z.number(says("a number > 0 (USD)")).positive(says("a number > 0 (USD)")).optional()
      })
      .optional(),
  tool_output: () =>
    z.strictObject({ max_lines: positiveInt().optional(), max_bytes: positiveInt().optional() }).optional(),
  doom_loop: () =>
    z
      .strictObject({
        threshold: z.number().int(says("an integer")).optional(),
        ignored_tools: z.array(z.string()).optional()
      })
      .optional(),
  retry: () =>
    z.strictObject({ max_retries: nonNegativeInt().optional(), max_delay_ms: nonNegativeInt().optional() }).optional(),
  /**
   * When the context fills up: `auto` (default true) compacts on its own (false: the turn goes on, compact by hand);
   * `prune` (default true) clears old tool outputs first (false: every output stays, a compaction summarises).
   */
  compaction: () => z.strictObject({ auto: z.boolean().optional(), prune: z.boolean().optional() }).optional(),
  /** The session's running summary by the hidden `summary` agent after each turn (`enabled`, default false). */
  summary: () => z.strictObject({ enabled: z.boolean().optional() }).optional(),
  /** Undo snapshots: `false` turns them off; caps are in bytes. Only the person's config and trusted projects set it. */
  snapshot: () =>
    z
      .union(
        [
          z.literal(false),
          z.strictObject({ max_file_size: positiveInt().optional(), max_snapshot_size: positiveInt().optional() })
        ],
        says("false, or an object with max_file_size / max_snapshot_size in bytes")
      )
      .optional(),
  /**
   * webfetch: `allow_private_hosts` lists hosts (`host` or `host:port`) on this machine or a private network it may
   * fetch; every other non-public address is refused. It widens, so an untrusted project may not set it.
   */
  webfetch: () =>
    z
      .strictObject({
        allow_private_hosts: z.array(z.string(), says('an array of "host" or "host:port" strings')).optional()
      })
      .optional(),
  /**
   * Web and code search (`@lathe/websearch`): `backend` is the service `websearch` queries (default: the first whose
   * variable is set: `SEARXNG_URL`, `TAVILY_API_KEY`, `EXA_API_KEY`, `BRAVE_API_KEY`); `key_env` names the variable
   * holding its key (keys never sit in config); `native: false` never sends the model provider's own search. An
   * untrusted project may only switch search off.
   */
  websearch: () =>
    z
      .strictObject({
        backend: z.enum(["searxng", "brave", "exa", "tavily", "off"]).optional(),
        url: z.url({ protocol: /^https?$/, error: "an http(s) URL" }).optional(),
        key_env: z.string().optional(),
        max_results: positiveInt().max(20, says("at most 20")).optional(),
        native: z.boolean().optional(),
        codesearch: z
          .strictObject({
            backend: z.enum(["github", "sourcegraph", "off"]).optional(),
            url: z.url({ protocol: /^https?$/, error: "an http(s) URL" }).optional(),
            token_env: z.string().optional()
          })
          .optional()
      })
      .optional(),
  /**
   * Language servers (`@lathe/lsp`): `install` (default true) installs TypeScript's and Python's servers into the
   * data folder when missing; `warnings` appends warnings too; `wait_ms` bounds the wait for diagnostics after an edit
   * (default 2000); `max_diagnostics` per file (default 20). Other keys name servers: a built-in (`typescript`,
   * `pyright`, `gopls`, `rust-analyzer`) to change or switch off (`false`), or a new one with `command` and
   * `extensions`. Only the person's config and trusted projects set it.
   */
  lsp: () =>
    z
      .object({
        install: z.boolean().optional(),
        warnings: z.boolean().optional(),
        wait_ms: positiveInt().max(60_000, says("at most 60000")).optional(),
        max_diagnostics: positiveInt().max(500, says("at most 500")).optional()
      })
      .catchall(
        z.union(
          [
            z.literal(false),
            z.strictObject({
              command: z
                .array(z.string(), says("an array of strings: the program and its arguments"))
                .min(1)
                .optional(),
              extensions: z.array(z.string(), says('an array of extensions, e.g. [".ts"]')).optional(),
              env: stringMap().optional(),
              initialization: z.record(z.string(), z.unknown()).optional(),
              disabled: z.boolean().optional()
            })
          ],
          says('false, or a server: { "command": ["…"], "extensions": [".x"] }')
        )
      )
      .optional(),
  /** The OS sandbox bash runs in; see {@link SandboxConfig}. A project that is not trusted may only narrow it. */
  sandbox: () => SandboxConfig.optional(),
  /** Where sessions are kept; see {@link StoreConfig}. `LATHE_STORE` overrides it for one run. */
  store: () => StoreConfig.optional(),
  /**
   * The model catalogue: `refresh: false` stops the daily background download (default true); `url` is where it is
   * downloaded from (default https://models.dev/api.json; `LATHE_MODELS_URL` overrides both); `notice: false`
   * silences the notice about a model the catalogue does not know (shown once per model otherwise).
   */
  models: () =>
    z
      .strictObject({
        refresh: z.boolean().optional(),
        notice: z.boolean().optional(),
        url: z.url({ protocol: /^https?$/, error: "an http(s) URL" }).optional()
      })
      .optional(),
  /** How bash builds commands' environment. */
  shell: () =>
    z
      .strictObject({
        env: z
          .strictObject({
            /** Variables that reach commands although their names look like secrets (KEY, SECRET, TOKEN, PASSWORD). */
            inherit: z.array(z.string(), says("an array of variable names")).optional(),
            /**
             * Variables set for every command (Claude Code's `env` lands here); a secret-looking name still needs
             * `inherit`. Only the person's config and trusted projects set it.
             */
            set: stringMap().optional()
          })
          .optional()
      })
      .optional()
}

type ConfigFields = typeof configFields
type ConfigKey = keyof ConfigFields
type BuiltFields = { [K in ConfigKey]: ReturnType<ConfigFields[K]> }

const builtFields = new Map<ConfigKey, z.ZodType>()
/** The schema of one key of a config file, built once. */
const fieldSchema = <K extends ConfigKey>(key: K): BuiltFields[K] => {
  let schema = builtFields.get(key)
  if (schema === undefined) {
    schema = configFields[key]()
    builtFields.set(key, schema)
  }
  return schema as BuiltFields[K]
}

const CONFIG_KEYS = Object.keys(configFields) as Array<ConfigKey>

/** The shape of a strict object of `keys`' schemas. */
const shapeOf = (keys: ReadonlyArray<ConfigKey>) => Object.fromEntries(keys.map((key) => [key, fieldSchema(key)]))

/** A `lathe.json` / `lathe.jsonc` file. Unknown keys are errors, except inside `options` objects. */
export const ConfigFile = lazySchema(() => z.strictObject(shapeOf(CONFIG_KEYS) as BuiltFields))
/** A config file after validation. */
export type ConfigFile = z.infer<typeof ConfigFile>
/** A config file as written (what `Config.layerTest` takes). */
export type ConfigFileInput = z.input<typeof ConfigFile>

const schemasByKeys = new Map<string, z.ZodType<ConfigFile, ConfigFileInput>>()

/**
 * The schema to check `value` with as a config file. When every key it has is a config key: a strict object of those
 * keys' schemas only (each built once), which accepts, rejects and returns what `ConfigFile` would (an absent optional
 * key stays absent, keys come in `ConfigFile`'s order, the problems found are the same). Else `ConfigFile` itself,
 * whose error names the keys a file may have.
 */
export const configFileSchemaFor = (value: unknown): z.ZodType<ConfigFile, ConfigFileInput> => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return ConfigFile
  const keys = CONFIG_KEYS.filter((key) => Object.hasOwn(value, key))
  if (keys.length !== Object.keys(value).length) return ConfigFile
  const name = keys.join(",")
  let schema = schemasByKeys.get(name)
  if (schema === undefined) {
    schema = z.strictObject(shapeOf(keys)) as unknown as z.ZodType<ConfigFile, ConfigFileInput>
    schemasByKeys.set(name, schema)
  }
  return schema
}
