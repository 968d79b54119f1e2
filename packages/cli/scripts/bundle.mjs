// Bundles the CLI into dist/bundle/ (one ESM entry, lazily loaded chunks): a cold start then reads a handful of
// files instead of resolving and linking hundreds of modules. Workspace packages are taken from source (the
// `@lathe/source` condition). Kept external: what finds files next to its own module at run time (web-tree-sitter's
// runtime wasm, the ripgrep binary); they are the published CLI's only dependencies. The bash grammar's wasm and the
// models catalogue (as `models-catalog.dat`, read on first use) are written beside the bundle. Tool descriptions,
// read from `.txt` files at load time, are inlined. The CLI's version and the commit it was built from are written
// in (`__LATHE_VERSION__`, `__LATHE_COMMIT__`: `lathe --version` runs no git), and chunks no code imports are deleted,
// so the package ships only what loads.
// The interactive UI (Ink 8 + React 19 + yoga-layout, whose wasm ships inlined as base64 behind a top-level await)
// is imported lazily, so it lands in chunks of its own: React in its production build, Ink's DevTools hook stubbed.
// The AI Gateway provider `ai` imports at load (Lathe never uses it) is replaced by a stand-in.
// Run as a script it writes dist/bundle/; imported, it only exports `bundleOptions` (the tests bundle with them).
import { execFileSync } from "node:child_process"
import { copyFileSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { build } from "esbuild"
import { directImportsPlugin } from "./direct-imports.mjs"
import { memoizedPromptConversion } from "./prompt-memo.mjs"
import { pureTopLevelSchemas } from "./pure-schemas.mjs"

const here = dirname(fileURLToPath(import.meta.url))
const cli = join(here, "..")
const cliVersion = JSON.parse(readFileSync(join(cli, "package.json"), "utf8")).version

/** The short commit of the checkout being built (`__LATHE_COMMIT__`, for `lathe --version`), or null outside git. */
const buildCommit = (() => {
  try {
    const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], {
      cwd: cli,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"]
    }).trim()
    return /^[0-9a-f]{4,40}$/.test(commit) ? commit : null
  } catch {
    return null
  }
})()

/** Where the bash grammar's wasm goes: beside the main build's chunks (`dist/bundle/`). */
const GRAMMAR = "tree-sitter-bash.wasm"

/**
 * Points @lathe/permission's grammar loader at the copy of `tree-sitter-bash.wasm` beside the bundle (`fromChunk`:
 * the path from the built file's folder), so the published CLI does not depend on `tree-sitter-bash` (20 MB with its
 * native sources and prebuilt binaries, and an install script). The build fails if the loader changed.
 */
const grammarBesideBundle = (fromChunk) => sourcePatchPlugin("grammar-beside-bundle", grammarPatch(fromChunk))

/** The source patch behind `grammarBesideBundle` (also applied by the run build's `directImportsPlugin`). */
const grammarPatch = (fromChunk) => ({
  filter: /[\\/]permission[\\/]src[\\/]bash\.ts$/,
  patch: (contents, path) => {
    const from = 'require.resolve("tree-sitter-bash/tree-sitter-bash.wasm")'
    if (contents.split(from).length !== 2)
      throw new Error(`${path}: expected one \`${from}\`; update the grammar-beside-bundle plugin`)
    const to = `require("node:url").fileURLToPath(new URL(${JSON.stringify(fromChunk)}, import.meta.url))`
    return contents.replace(from, to)
  }
})

/** An esbuild plugin that loads the TypeScript files `filter` matches with `patch(contents, path)` applied. */
const sourcePatchPlugin = (name, { filter, patch }) => ({
  name,
  setup(b) {
    b.onLoad({ filter }, (args) => ({ contents: patch(readFileSync(args.path, "utf8"), args.path), loader: "ts" }))
  }
})

/** Where the models catalogue shipped with the CLI goes: beside the main build's chunks (`dist/bundle/`). */
const CATALOG = "models-catalog.dat"

/** Where `lathe web`'s app goes: a folder beside the main build's chunks (`dist/bundle/web/`). */
const WEB_APP = "web"

/** Where the JSON Schema of lathe.json goes (`lathe config schema`'s output): beside the bundle, shipped with it. */
const CONFIG_SCHEMA = "lathe.schema.json"

/**
 * @lathe/core's catalogue (`catalog/snapshot.json`: per provider its details and its models as one JSON string) as
 * the bundle ships it (`CATALOG`): in the catalogue file format of @lathe/core's `catalog-file.ts` (a first line of
 * JSON with the providers' details, then their models and lower-cased ids as raw text at the offsets it gives),
 * written by that module's built copy. A start parses only the first line; a provider's models stay bytes until the
 * catalogue looks at that provider.
 */
const catalogFile = async (snapshot) => {
  const { writeCatalogFile } = await import(
    pathToFileURL(join(cli, "..", "core", "dist", "catalog", "catalog-file.js")).href
  )
  return writeCatalogFile(JSON.parse(readFileSync(snapshot, "utf8")))
}

/**
 * The expression that reads `catalogFile`'s output back from `file` (`readCatalogFd`, imported by the patch): its first
 * line at once, the rest as it is looked at.
 */
const catalogReader = (file) => `readCatalogFd(require("node:fs").openSync(${file}, "r"))`

/**
 * Makes @lathe/core read its shipped models catalogue from the bundle's copy (`catalogFile`; `fromChunk`: its path
 * from the built file's folder) on first use, instead of inlining ~550 KiB of JSON as JavaScript that every start
 * reads, hashes and deserialises. The build fails if the loader changed.
 */
const catalogBesideBundle = (fromChunk) => sourcePatchPlugin("catalog-beside-bundle", catalogPatch(fromChunk))

/** The source patch behind `catalogBesideBundle` (also applied by the run build's `directImportsPlugin`). */
const catalogPatch = (fromChunk) => ({
  filter: /[\\/]core[\\/]src[\\/]catalog[\\/]models-dev\.ts$/,
  patch: (contents, path) => {
    const from = '(await import("./snapshot.json", { with: { type: "json" } })).default'
    if (contents.split(from).length !== 2)
      throw new Error(`${path}: expected one \`${from}\`; update the catalog-beside-bundle plugin`)
    const to = catalogReader(`new URL(${JSON.stringify(fromChunk)}, import.meta.url)`)
    return `import { readCatalogFd } from "./catalog-file.js"\n${contents.replace(from, to)}`
  }
})

/**
 * Deletes the JavaScript files of a build that its entry points (`entries`: source paths) do not reach by their
 * imports: esbuild still writes the chunk of a dynamic import whose importing code it dropped (effect's ~5 MiB API
 * docs pages, which `lathe serve` does not serve), and nothing can load it.
 */
const pruneUnreached = (metafile, entries) => {
  const outputs = metafile.outputs
  const roots = new Set(entries.map((entry) => resolve(entry)))
  const reached = new Set()
  const pending = Object.keys(outputs).filter(
    (file) => outputs[file].entryPoint !== undefined && roots.has(resolve(outputs[file].entryPoint))
  )
  while (pending.length > 0) {
    const file = pending.pop()
    if (reached.has(file)) continue
    reached.add(file)
    for (const imported of outputs[file]?.imports ?? []) if (!imported.external) pending.push(imported.path)
  }
  const pruned = Object.keys(outputs).filter((file) => file.endsWith(".js") && !reached.has(file))
  for (const file of pruned) {
    rmSync(resolve(file), { force: true })
    rmSync(resolve(`${file}.LEGAL.txt`), { force: true })
    delete outputs[file]
    delete outputs[`${file}.LEGAL.txt`]
  }
  return pruned
}

/** Replaces the tools package's description loader with the descriptions themselves. */
const inlineDescriptions = {
  name: "inline-tool-descriptions",
  setup(b) {
    b.onLoad({ filter: /[\\/]tools[\\/]src[\\/]description\.ts$/ }, (args) => {
      const dir = dirname(args.path)
      const texts = Object.fromEntries(
        readdirSync(dir)
          .filter((file) => file.endsWith(".txt"))
          .map((file) => [file.slice(0, -4), readFileSync(join(dir, file), "utf8").trim()])
      )
      return {
        contents:
          `const texts = ${JSON.stringify(texts)}\n` +
          "export const loadDescription = (name) => {\n" +
          "  const text = texts[name]\n" +
          '  if (text === undefined) throw new Error("No description for the " + name + " tool in this build.")\n' +
          "  return text\n}\n",
        loader: "js"
      }
    })
  }
}

/**
 * Replaces Ink's React DevTools bridge (`ink/build/devtools.js`, loaded only when DEV=true and the optional peer
 * `react-devtools-core` resolves) with an empty module. Stubbed rather than external: the build needs no
 * `react-devtools-core`, and the shipped CLI never opens a socket to a DevTools server because some unrelated tool
 * set DEV=true and a copy of `react-devtools-core` happens to be resolvable from where the CLI is installed.
 */
const stubInkDevtools = {
  name: "stub-ink-devtools",
  setup(b) {
    b.onLoad({ filter: /[\\/]ink[\\/]build[\\/]devtools\.js$/ }, () => ({
      contents: "// React DevTools are not part of the bundled CLI.\n",
      loader: "js"
    }))
  }
}

/**
 * Replaces `livekit-client`, an optional peer of `@ai-sdk/mistral` imported only for Mistral's realtime voice (which
 * Lathe never uses), with a module that fails to load: the SDK turns that into its own "Install it" error. Without
 * this, esbuild leaves the import external and the published CLI would import a package it does not depend on.
 */
const stubLivekit = {
  name: "stub-livekit-client",
  setup(b) {
    b.onResolve({ filter: /^livekit-client$/ }, () => ({ path: "livekit-client", namespace: "lathe-stub-livekit" }))
    b.onLoad({ filter: /.*/, namespace: "lathe-stub-livekit" }, () => ({
      contents: 'throw new Error("Mistral realtime voice (livekit-client) is not part of the bundled Lathe CLI.")\n',
      loader: "js"
    }))
  }
}

/**
 * Replaces the Vercel AI Gateway provider (`@ai-sdk/gateway`, with `@vercel/oidc` and zod's mini build behind it)
 * with a stand-in. `ai` imports it at load for one purpose: the provider a bare model-id string resolves through.
 * Lathe never hands `ai` a string (it builds every model from its own provider config), so the bundled CLI skips
 * evaluating ~100 KiB at every start; the stand-in's errors match nothing, and using it fails with a clear message.
 */
const stubGateway = {
  name: "stub-ai-gateway",
  setup(b) {
    b.onResolve({ filter: /^@ai-sdk\/gateway$/ }, () => ({ path: "@ai-sdk/gateway", namespace: "lathe-stub" }))
    b.onLoad({ filter: /.*/, namespace: "lathe-stub" }, () => ({
      contents:
        "const unavailable = () => {\n" +
        '  throw new Error("The AI Gateway provider is not part of the bundled Lathe CLI: configure a provider in lathe.json.")\n' +
        "}\n" +
        "export class GatewayError extends Error { static isInstance() { return false } }\n" +
        "export class GatewayAuthenticationError extends GatewayError { static isInstance() { return false } }\n" +
        "export const createGateway = unavailable\n" +
        "export const gateway = new Proxy(unavailable, { get: unavailable })\n",
      loader: "js"
    }))
  }
}

/**
 * The AI SDK's request helpers without undici's `Headers`. `postToApi` passes every request's headers through
 * `withUserAgentSuffix` (`new Headers(…)`) and `normalizeHeaders` (`instanceof Headers`); naming the global loads all
 * of undici (Node's `fetch`), some 15 ms of a `lathe run` start, although the providers send through `nodeFetch`
 * (`@lathe/core`), which never needs it. The rewrite keeps their results: lower-case names, `undefined` dropped, the
 * user agent extended; a real `Headers` is still recognised (by its tag). Node's HTTP client validates names and
 * values when it sends. The build fails if the SDK's code changed, rather than bundle an unpatched copy silently.
 */
const aiSdkHeadersWithoutUndici = {
  name: "ai-sdk-headers-without-undici",
  setup(b) {
    b.onLoad({ filter: /[\\/]@ai-sdk[\\/]provider-utils[\\/]dist[\\/]index\.js$/ }, (args) => {
      const replacements = [
        [
          "if (headers instanceof Headers) headers.forEach(",
          'if (Object.prototype.toString.call(headers) === "[object Headers]") headers.forEach('
        ],
        [
          "const normalizedHeaders = new Headers(normalizeHeaders(headers));\n" +
            '\tconst currentUserAgentHeader = normalizedHeaders.get("user-agent") || "";\n' +
            '\tnormalizedHeaders.set("user-agent", [currentUserAgentHeader, ...userAgentSuffixParts].filter(Boolean).join(" "));\n' +
            "\treturn Object.fromEntries(normalizedHeaders.entries());",
          "const normalizedHeaders = normalizeHeaders(headers);\n" +
            '\tconst currentUserAgentHeader = normalizedHeaders["user-agent"] || "";\n' +
            '\tnormalizedHeaders["user-agent"] = [currentUserAgentHeader, ...userAgentSuffixParts].filter(Boolean).join(" ");\n' +
            "\treturn normalizedHeaders;"
        ]
      ]
      let contents = readFileSync(args.path, "utf8")
      for (const [from, to] of replacements) {
        if (contents.split(from).length !== 2)
          throw new Error(
            `${args.path}: expected one \`${from.split("\n")[0]}\`; the AI SDK changed, update this patch`
          )
        contents = contents.replace(from, to)
      }
      return { contents, loader: "js" }
    })
  }
}

/**
 * Web streams on first use. Two stream classes are defined when their module loads — `EventSourceParserStream`
 * (eventsource-parser, under the AI SDK's provider utilities) and `JsonToSseTransformStream` (`ai`) — and `extends
 * TransformStream` reads the global, which makes Node load its web streams (`internal/webstreams/*`: transform,
 * readable, writable) while `lathe run` starts, though nothing streams before the first model request has gone out.
 * Here both extend a stand-in that builds the real `TransformStream` when the first instance is made (what `super()`
 * returns becomes the instance: a real TransformStream, of the subclass), and only then puts
 * `TransformStream.prototype` under its own, so `readable`, `writable` and `instanceof TransformStream` are as before.
 * The build fails if either package's code changed, rather than bundle an unpatched copy silently.
 */
/** The `ai` package's one module (also where `pureTopLevelSchemas` applies). */
const AI_SDK_INDEX = /[\\/]node_modules[\\/]ai[\\/]dist[\\/]index\.js$/

const WEB_STREAMS_ON_FIRST_USE = [
  [/[\\/]eventsource-parser[\\/]dist[\\/]stream\.js$/, "class EventSourceParserStream extends TransformStream {"],
  [AI_SDK_INDEX, "var JsonToSseTransformStream = class extends TransformStream {"]
]

const TRANSFORM_STREAM_ON_FIRST_USE =
  "function __latheTransformStream(...args) {\n" +
  "  const own = __latheTransformStream.prototype\n" +
  "  if (Object.getPrototypeOf(own) !== TransformStream.prototype) Object.setPrototypeOf(own, TransformStream.prototype)\n" +
  "  return Reflect.construct(TransformStream, args, new.target)\n" +
  "}\n"

/**
 * The AI SDK's clock (`now()`, whose differences time a call: the first chunk, the response, a step, a tool) on
 * `process.hrtime`, as effect's is: `globalThis.performance` is a getter that loads Node's whole `perf_hooks` (the
 * performance timeline, observers, `timerify`: ~2–3 ms of compiling built-ins) the first time it is read, which was
 * as the first model request was being made. Milliseconds from another origin, the same differences.
 */
const sdkClockWithoutPerfHooks = (source, path) => {
  const from = "return globalThis?.performance?.now() ?? Date.now();"
  if (source.split(from).length !== 2)
    throw new Error(`${path}: expected one \`${from}\`; the AI SDK changed, update sdkClockWithoutPerfHooks`)
  return source.replace(from, "return Number(process.hrtime.bigint()) / 1e6;")
}

const webStreamsOnFirstUse = {
  name: "web-streams-on-first-use",
  setup(b) {
    for (const [filter, from] of WEB_STREAMS_ON_FIRST_USE)
      b.onLoad({ filter }, (args) => {
        const contents = readFileSync(args.path, "utf8")
        if (contents.split(from).length !== 2)
          throw new Error(`${args.path}: expected one \`${from}\`; the package changed, update this patch`)
        const to = from.replace("extends TransformStream {", "extends __latheTransformStream {")
        const replaced = contents.replace(from, to)
        // The AI SDK's module-level schemas nothing uses are dropped, and its prompt conversion is kept per message
        // (this plugin loads that file: one loader each).
        if (!AI_SDK_INDEX.test(args.path)) return { contents: TRANSFORM_STREAM_ON_FIRST_USE + replaced, loader: "js" }
        const pure = pureTopLevelSchemas(memoizedPromptConversion(sdkClockWithoutPerfHooks(replaced, args.path)))
        if (pure.marked < 100)
          throw new Error(
            `${args.path}: only ${pure.marked} schema calls found to mark; update scripts/pure-schemas.mjs`
          )
        return { contents: TRANSFORM_STREAM_ON_FIRST_USE + pure.contents, loader: "js" }
      })
  }
}

/**
 * Node built-ins whose ES module namespace costs more than the module: Node builds the namespace of `node:fs` by
 * reading every export, and with them the getters `fs.promises`, `fs.ReadStream`… (so `fs/promises`, `readline` and
 * all of Node's streams load); `node:process` reads `process.stdin`, `stdout` and `stderr` (three streams built);
 * `node:util` its lazy parts. `import { readFileSync } from "node:fs"` in `lathe --version`'s few modules cost some
 * 12 M instructions (a tenth of the whole start) that `require("node:fs")` does not.
 */
const NAMESPACE_HEAVY_BUILTINS = ["fs", "process", "util"]

/**
 * In the ES module builds: those built-ins are taken as CommonJS (`process.getBuiltinModule`, Node 22.3+), so an
 * import reads an export when the code uses it, not every export at load. Names are looked up at use (esbuild's
 * CommonJS interop); what the code imports is unchanged.
 */
const builtinsWithoutNamespace = {
  name: "builtins-without-namespace",
  setup(b) {
    const filter = new RegExp(`^(node:)?(${NAMESPACE_HEAVY_BUILTINS.join("|")})$`)
    b.onResolve({ filter }, (args) => ({ path: `node:${args.path.replace(/^node:/, "")}`, namespace: "lathe-builtin" }))
    b.onLoad({ filter: /.*/, namespace: "lathe-builtin" }, (args) => ({
      contents: `module.exports = process.getBuiltinModule(${JSON.stringify(args.path)})\n`,
      loader: "js"
    }))
  }
}

/**
 * zod's error messages in English only: its barrels re-export every locale (`z.locales`, ~260 KiB of the run build,
 * some 14 % of it, read at every start) and Lathe, like zod by default, speaks English. Each other locale's name stays,
 * as a function that says it was left out of the bundle.
 */
const zodEnglishOnly = {
  name: "zod-english-only",
  setup(b) {
    b.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, (args) => {
      const names = [
        ...readFileSync(args.path, "utf8").matchAll(/export \{ default as (\w+) \} from "\.\/(\w+)\.js";/g)
      ]
      if (!names.some(([, name]) => name === "en"))
        throw new Error(`${args.path}: no \`en\` locale found; update the zod-english-only plugin`)
      const others = names.filter(([, name]) => name !== "en").map(([, name]) => name)
      return {
        contents:
          'export { default as en } from "./en.js";\n' +
          others
            .map(
              (name) =>
                `export const ${name} = () => { throw new Error("zod's ${name} locale is not in the Lathe bundle (English only)") };`
            )
            .join("\n"),
        loader: "js",
        resolveDir: dirname(args.path)
      }
    })
  }
}

/**
 * For the run build: effect's API docs pages (Scalar, Swagger UI; ~5 MiB of inlined assets behind a lazy import) come
 * along with the `effect/http-api` barrel the SDK uses for `lathe run --attach`, which never serves docs. Only
 * `lathe serve` does, from the main build.
 */
const stubApiDocs = {
  name: "stub-api-docs",
  setup(b) {
    b.onResolve({ filter: /^\.\/internal\/httpApi(Scalar|Swagger)\.js$/ }, (args) => ({
      path: args.path,
      namespace: "lathe-stub-docs"
    }))
    b.onLoad({ filter: /.*/, namespace: "lathe-stub-docs" }, () => ({
      contents: 'throw new Error("API docs pages are served by lathe serve, not by lathe run.")\n',
      loader: "js"
    }))
  }
}

/**
 * Provider SDKs that only some people use, imported by their provider descriptor's `load` (`@lathe/core`'s
 * `provider/`). They are built once, as ES modules, into `dist/bundle/providers/` (shared code in chunks there), and
 * both the run build and the main build import them from there. Inlined into the run build (one CommonJS file, no
 * code splitting) they would be parsed at every start, used or not: about 1.8 MiB, some 40 ms before the first
 * request. Anthropic's, OpenAI's and the OpenAI-compatible SDKs stay in each build, as before.
 */
export const LAZY_SDKS = [
  "@ai-sdk/amazon-bedrock",
  "@ai-sdk/azure",
  "@ai-sdk/cerebras",
  "@ai-sdk/deepseek",
  "@ai-sdk/fireworks",
  "@ai-sdk/google",
  "@ai-sdk/google-vertex",
  "@ai-sdk/google-vertex/anthropic",
  "@ai-sdk/groq",
  "@ai-sdk/mistral",
  "@ai-sdk/togetherai",
  "@ai-sdk/xai",
  "@openrouter/ai-sdk-provider"
]

/** The file a lazy SDK is built to, inside `providers/` (`@ai-sdk/google-vertex/anthropic` → `ai-sdk-google-vertex-anthropic`). */
const sdkFile = (specifier) => specifier.replace(/^@/, "").replaceAll("/", "-")

/** The entries of the providers build: each lazy SDK, re-exported from a module that resolves it from `@lathe/core`. */
const sdkEntries = {
  name: "lazy-sdk-entries",
  setup(b) {
    b.onResolve({ filter: /^lathe-sdk:/ }, (args) => ({
      path: args.path.slice("lathe-sdk:".length),
      namespace: "lathe-sdk"
    }))
    b.onLoad({ filter: /.*/, namespace: "lathe-sdk" }, (args) => ({
      contents: `export * from ${JSON.stringify(args.path)}\n`,
      resolveDir: join(cli, "..", "core"),
      loader: "js"
    }))
  }
}

/** In the run and main builds: a lazy SDK is imported from `providers/` at `prefix` (relative to the build's output). */
const sdksFromProvidersBuild = (prefix) => ({
  name: "lazy-sdks-from-providers-build",
  setup(b) {
    const names = new Set(LAZY_SDKS)
    b.onResolve({ filter: /^(@ai-sdk|@openrouter)\// }, (args) =>
      names.has(args.path) ? { path: `${prefix}providers/${sdkFile(args.path)}.js`, external: true } : undefined
    )
  }
})

/**
 * In the main build, `main.ts`'s lazy import of the run command becomes `src/run-bundled.ts`, which loads the
 * separate run build (`dist/bundle/run/run.cjs`) with a V8 code cache.
 */
const runCommandFromRunBuild = {
  name: "run-command-from-run-build",
  setup(b) {
    b.onResolve({ filter: /^\.\/commands\/run\.js$/ }, (args) =>
      args.importer.endsWith(join("src", "main.ts")) ? { path: join(cli, "src/run-bundled.ts") } : undefined
    )
  }
}

/**
 * Packages the run build keeps in side files of their own (`run/vendor-<name>.cjs`), required when the code that
 * imports them first runs. In run.cjs they were read at every start and, with no code cache (the first run after an
 * install), compiled with the rest although a plain run never evaluates them: the web fetch tool's HTML converters
 * (turndown with its DOM, html-to-text with its parser), the terminal's Markdown renderer (marked, lowlight with
 * highlight.js's grammars, loaded after the first request) and yaml (front matter of skills, agents and custom
 * commands). Without a code cache that was ~130 M instructions of the ~1,950 M of a one-request run. A side file is
 * taken through Node's `require` (with Node's compile cache): loading one with a V8 code cache of its own, as run.cjs
 * is, measured no different (a run at a terminal, which loads the Markdown renderer: 1,283–1,295 M either way).
 * Each package here must be imported only by modules that initialise lazily (behind an `import()`: bundle.e2e checks
 * a plain run loads none), must not share state with the rest of the build (each side file has its own copy of what
 * it imports), and is imported by its name alone (no subpath), with `"*"` or the names listed.
 */
export const RUN_VENDORS = {
  turndown: { turndown: "*" },
  "html-to-text": { "html-to-text": "*" },
  // By the names the renderer takes: lowlight's namespace would bring every grammar highlight.js has (~1 MB), and
  // marked's has `defaults`, a binding `setOptions` reassigns (the stand-in re-exports values, not live bindings).
  markdown: { marked: ["Lexer"], lowlight: ["common", "createLowlight"] },
  yaml: { yaml: "*" }
}

/**
 * Packages the run build keeps in side files like `RUN_VENDORS`, but which share packages with the rest of the build
 * (`RUN_SHARED`: zod, whose settings are module state, and the AI SDK's provider packages): a side file holds the
 * package's own code only and takes each shared package from run.cjs, so nothing is evaluated twice. A plain run
 * never evaluates them (the guard's model goes through the OpenAI-compatible provider, no MCP server), yet with no
 * code cache their ~620 KB were compiled at every first run: the OpenAI and Anthropic SDKs (loaded by a run on those
 * providers) and the MCP SDK with its JSON Schema validator (ajv), loaded when a session has MCP servers. Their files
 * (`side-<name>.cjs`) are loaded with a V8 code cache of their own (`loadWithCodeCache`): the SDK's functions run in
 * every request, and through Node's `require` a warm run would compile them again each time.
 */
export const RUN_SIDE_PACKAGES = {
  openai: { "@ai-sdk/openai": "*" },
  anthropic: { "@ai-sdk/anthropic": "*" },
  mcp: {
    "@modelcontextprotocol/sdk/client/index.js": "*",
    "@modelcontextprotocol/sdk/client/auth.js": "*",
    "@modelcontextprotocol/sdk/client/sse.js": "*",
    "@modelcontextprotocol/sdk/client/streamableHttp.js": "*",
    "@modelcontextprotocol/sdk/shared/auth.js": "*",
    "@modelcontextprotocol/sdk/shared/stdio.js": "*"
  }
}

/**
 * The packages a `RUN_SIDE_PACKAGES` side file takes from run.cjs instead of holding a copy: `name` is that specifier
 * alone, `name/*` its subpaths.
 */
export const RUN_SHARED = [
  "zod",
  "zod/*",
  "@ai-sdk/provider",
  "@ai-sdk/provider-utils",
  "eventsource-parser",
  "eventsource-parser/*"
]

/** Whether a specifier is one of `RUN_SHARED`. */
const isShared = (specifier) =>
  RUN_SHARED.some((pattern) =>
    pattern.endsWith("/*") ? specifier.startsWith(pattern.slice(0, -1)) : specifier === pattern
  )

/**
 * A `RUN_SIDE_PACKAGES` side file exports a function: given `shared` (a specifier of `RUN_SHARED` → that module), it
 * evaluates the file once, its `require` answering shared specifiers from `shared` and the rest (Node's built-ins)
 * through Node's, and returns the exports every time.
 */
const SIDE_OPEN =
  "let __latheSide;module.exports=(__latheShared)=>__latheSide??=((__latheNodeRequire)=>{" +
  "const require=(id)=>__latheShared(id)??__latheNodeRequire(id);const module={exports:{}};const exports=module.exports;"
const SIDE_CLOSE = "return module.exports})(require);"

/**
 * The file a run vendor (`vendor-<name>.cjs`) or side package (`side-<name>.cjs`: `loadWithCodeCache` loads these
 * with a V8 code cache of their own) is built to, inside `run/`.
 */
const vendorFile = (name) => (name in RUN_SIDE_PACKAGES ? `side-${name}.cjs` : `vendor-${name}.cjs`)

/**
 * The entry of a vendor's side file: each of its packages (`RUN_VENDORS`: all its exports, or the names listed) as
 * `m0`, `m1`… in order, so a side file holding several packages keeps one copy of what they share.
 */
const vendorEntry = (packages) =>
  Object.entries(packages)
    .map(([specifier, names], index) =>
      names === "*"
        ? `export * as m${index} from ${JSON.stringify(specifier)}\n`
        : `import { ${names.map((name) => `${name} as m${index}_${name}`).join(", ")} } from ${JSON.stringify(specifier)}\n` +
          `export const m${index} = { ${names.map((name) => `${name}: m${index}_${name}`).join(", ")} }\n`
    )
    .join("")

/**
 * The names each vendored package exports, read from the side files just built (`dir`: the run build's folder):
 * the run build's stand-in for a package re-exports exactly these. Loading them evaluates the packages here, once.
 */
const vendorExports = (dir) => {
  const load = createRequire(join(dir, "vendor-exports.cjs"))
  // Here a side package's shared modules come from node_modules, as this script resolves them.
  const fromTree = createRequire(join(cli, "package.json"))
  const shared = (specifier) => (isShared(specifier) ? fromTree(specifier) : undefined)
  return new Map(
    [...Object.entries(RUN_VENDORS), ...Object.entries(RUN_SIDE_PACKAGES)].flatMap(([name, packages]) => {
      const loaded = load(`./${vendorFile(name)}`)
      const side = name in RUN_SIDE_PACKAGES ? loaded(shared) : loaded
      return Object.keys(packages).map((specifier, index) => [specifier, Object.keys(side[`m${index}`])])
    })
  )
}

/**
 * Which `RUN_SHARED` specifiers each side package's file requires (its name → specifiers), from the metafile of
 * their build: the run build's stand-in hands it exactly these.
 */
const sharedImports = (metafile) =>
  new Map(
    Object.values(metafile.outputs)
      .filter((output) => output.entryPoint?.startsWith("lathe-vendor:"))
      .map((output) => [
        output.entryPoint.slice("lathe-vendor:".length),
        [...new Set(output.imports.filter((i) => i.external && isShared(i.path)).map((i) => i.path))]
      ])
  )

/**
 * In the run build: an import of a vendored package becomes a module that requires its side file (`require` here is
 * the run build's own, relative to run.cjs) and re-exports the package's names. Taken when the importing module
 * initialises, i.e. when the code that needs it first runs.
 */
const vendorsBesideRunBuild = (exportsOf, sharedOf = new Map()) => ({
  name: "vendors-beside-run-build",
  setup(b) {
    const where = new Map(
      [...Object.entries(RUN_VENDORS), ...Object.entries(RUN_SIDE_PACKAGES)].flatMap(([name, packages]) =>
        Object.keys(packages).map((specifier, index) => [
          specifier,
          {
            file: vendorFile(name),
            key: `m${index}`,
            shared: name in RUN_SIDE_PACKAGES ? sharedOf.get(name) : undefined
          }
        ])
      )
    )
    const filter = new RegExp(
      `^(${[...where.keys()].map((key) => key.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&")).join("|")})$`
    )
    b.onResolve({ filter }, (args) => ({ path: args.path, namespace: "lathe-run-vendor" }))
    b.onResolve({ filter: /^\.\/(vendor|side)-[\w-]+\.cjs$/ }, (args) => ({ path: args.path, external: true }))
    b.onLoad({ filter: /.*/, namespace: "lathe-run-vendor" }, (args) => {
      const { file, key, shared } = where.get(args.path)
      const names = exportsOf.get(args.path) ?? []
      // A side package gets run.cjs's own copy of each shared package it imports (bundled here as usual).
      const lines =
        shared === undefined
          ? [`const vendored = require(${JSON.stringify(`./${file}`)}).${key}`]
          : [
              ...shared.map((specifier, index) => `import * as shared${index} from ${JSON.stringify(specifier)}`),
              `const shared = new Map([${shared.map((specifier, index) => `[${JSON.stringify(specifier)}, shared${index}]`).join(", ")}])`,
              `const vendored = require(${JSON.stringify(`./${file}`)})((specifier) => shared.get(specifier)).${key}`
            ]
      for (const name of names) {
        if (!/^[A-Za-z_$][\w$]*$/.test(name))
          throw new Error(`${args.path}: cannot re-export \`${name}\` from its side file`)
        lines.push(name === "default" ? "export default vendored.default" : `export const ${name} = vendored.${name}`)
      }
      return { contents: `${lines.join("\n")}\n`, resolveDir: cli, loader: "js" }
    })
  }
})

/** The options of the build of the run vendors' side files (`RUN_VENDORS`), into the run build's `outdir`. */
export const runVendorsBuildOptions = (outdir, vendors = RUN_VENDORS) => {
  const { footer: _wrapperClose, ...options } = runBuildOptions(outdir)
  return {
    ...options,
    // Files Node's `require` loads (or, for a side package, `loadWithCodeCache` wraps): not their own wrapper.
    banner: { js: RUN_BANNER },
    entryPoints: Object.keys(vendors).map((name) => ({
      in: `lathe-vendor:${name}`,
      out: vendorFile(name).slice(0, -4)
    })),
    plugins: [
      {
        name: "run-vendor-entries",
        setup(b) {
          b.onResolve({ filter: /^lathe-vendor:/ }, (args) => ({
            path: args.path.slice("lathe-vendor:".length),
            namespace: "lathe-vendor"
          }))
          b.onLoad({ filter: /.*/, namespace: "lathe-vendor" }, (args) => ({
            contents: vendorEntry(vendors[args.path]),
            resolveDir: cli,
            loader: "js"
          }))
        }
      },
      ...options.plugins
    ]
  }
}

/**
 * The options of the build of the side packages' files (`RUN_SIDE_PACKAGES`), into the run build's `outdir`: each
 * file is wrapped as a function of the shared modules (`SIDE_OPEN`), which stay outside it (`RUN_SHARED`).
 */
export const runSidePackagesBuildOptions = (outdir) => {
  const options = runVendorsBuildOptions(outdir, RUN_SIDE_PACKAGES)
  // Not esbuild's `external` option: there a package name takes its subpaths with it, and the SDKs' own subpath
  // imports (`@ai-sdk/provider-utils/experimental-extraction`, used by no other package) stay in their files.
  const sharedOutside = {
    name: "shared-outside",
    setup(b) {
      b.onResolve({ filter: /^[@a-z]/ }, (args) =>
        isShared(args.path) ? { path: args.path, external: true } : undefined
      )
    }
  }
  return {
    ...options,
    banner: { js: `${SIDE_OPEN}${options.banner.js}` },
    footer: { js: SIDE_CLOSE },
    plugins: [sharedOutside, ...options.plugins]
  }
}

/**
 * The run build's namespace objects as object literals. esbuild builds each (`var ns = {}; __export(ns, { a: () => a,
 * … })`: 85 objects, 4,222 names in run.cjs) at the top of the script, before anything runs, one
 * `Object.defineProperty` per name; a literal with a getter per name (`var ns = { get a() { return a }, … }`) makes the
 * same object for ~17 M instructions less (a replica with run.cjs's names: ~27 M against ~10 M). The getters are the
 * same live bindings; they are configurable where esbuild's are not (nothing redefines a namespace's names). The
 * build fails if esbuild prints its helper or its calls otherwise, rather than ship them unrewritten.
 */
const namespaceLiterals = {
  name: "namespace-literals",
  setup(b) {
    b.onEnd((result) => {
      if (result.errors.length > 0 || result.metafile === undefined) return
      for (const output of Object.keys(result.metafile.outputs)) {
        if (!output.endsWith("run.cjs")) continue
        const file = resolve(output)
        writeFileSync(file, withNamespaceLiterals(readFileSync(file, "utf8"), file))
      }
    })
  }
}

/** `source` (an esbuild CommonJS build, minified or not) with its `__export` calls as literals; see `namespaceLiterals`. */
export const withNamespaceLiterals = (source, name = "the run build") => {
  const helper =
    /(?<![\w$])([\w$]+)\s*=\s*\(([\w$]+),\s*([\w$]+)\)\s*=>\s*\{\s*for\s*\(var ([\w$]+) in \3\)\s*[\w$]+\(\2,\s*\4,\s*\{\s*get:\s*\3\[\4\],\s*enumerable:\s*(?:!0|true)\s*\}\);?\s*\}/.exec(
      source
    )?.[1]
  if (helper === undefined) throw new Error(`${name}: esbuild's __export helper not found; update namespaceLiterals`)
  const key = String.raw`(?:[\w$]+|"[^"\\]*")`
  const entry = String.raw`${key}:\s*\(\)\s*=>\s*[\w$]+`
  const call = new RegExp(
    String.raw`var ([\w$]+)\s*=\s*\{\};\s*${helper.replaceAll("$", "\\$")}\(\1,\s*\{\s*(${entry}(?:,\s*${entry})*),?\s*\}\);`,
    "g"
  )
  let rewritten = 0
  const out = source.replace(call, (_, namespace, entries) => {
    rewritten++
    const getters = [...entries.matchAll(new RegExp(String.raw`(${key}):\s*\(\)\s*=>\s*([\w$]+)`, "g"))].map(
      ([, property, binding]) => `get ${property}(){return ${binding}}`
    )
    return `var ${namespace}={${getters.join(",")}};`
  })
  const calls = source.match(new RegExp(String.raw`(?<![\w$.])${helper.replaceAll("$", "\\$")}\(`, "g"))?.length ?? 0
  if (rewritten === 0 || rewritten !== calls)
    throw new Error(`${name}: ${rewritten} of ${calls} __export calls rewritten; update namespaceLiterals`)
  return out
}

/**
 * The function around the run build's code: what Node's CommonJS loader would put around it, written into the file.
 * `loadWithCodeCache` (src/code-cache.ts, `COMMONJS_WRAPPER_OPEN`) compiles a file that starts with it as it is.
 */
const RUN_WRAPPER_OPEN = "(function (exports, require, module, __filename, __dirname) {"
const RUN_WRAPPER_CLOSE = "\n})"

/** `import.meta.url` in the CommonJS files of the run build (run.cjs and the files beside it). */
const RUN_BANNER = 'const __latheImportMetaUrl = require("node:url").pathToFileURL(__filename).href;'

/**
 * The options of the run build: one CommonJS file, because a `vm.Script` can take a code cache written after the run
 * (with every function the run compiled) where Node's ES module loader takes one written at compile time (top-level
 * code only). `import.meta.url` becomes the file's own URL; `import()` of what stays outside (plugin files, the
 * ripgrep and tree-sitter packages) still goes to Node's loader (see `loadWithCodeCache`).
 */
export const runBuildOptions = (outdir) => {
  const options = bundleOptions({ entryPoints: { run: join(cli, "src/commands/run.ts") }, outdir })
  return {
    ...options,
    format: "cjs",
    splitting: false,
    outExtension: { ".js": ".cjs" },
    define: { ...options.define, "import.meta.url": "__latheImportMetaUrl" },
    // The file is its own CommonJS wrapper (`RUN_WRAPPER_OPEN`, see `loadWithCodeCache`), so the loader compiles the
    // text it read: wrapping it there made V8 copy the whole 2.2 MB source into a second string at every start.
    banner: { js: `${RUN_WRAPPER_OPEN}${RUN_BANNER}` },
    footer: { js: RUN_WRAPPER_CLOSE },
    // CommonJS output `require`s built-ins: no namespace to build.
    plugins: [
      ...options.plugins.filter((plugin) => plugin !== builtinsWithoutNamespace),
      stubApiDocs,
      namespaceLiterals
    ]
  }
}

/**
 * The options of the main build (`lathe.js` from `src/bin.ts`, its chunks in `outdir`): lazy SDKs from `providers/`,
 * `lathe run` from the run build, the bash grammar beside the bundle. Exported so tests can look at exactly what
 * `lathe` loads (bundle-closure.test.ts: nothing from effect before a command is chosen).
 */
export const mainBuildOptions = (outdir) => {
  const options = bundleOptions({ entryPoints: { lathe: join(cli, "src/bin.ts") }, outdir })
  return {
    ...options,
    plugins: [
      sdksFromProvidersBuild("./"),
      ...options.plugins,
      runCommandFromRunBuild,
      grammarBesideBundle(`./${GRAMMAR}`),
      catalogBesideBundle(`./${CATALOG}`)
    ]
  }
}

/**
 * The esbuild options of the CLI bundle for the given entry points and output directory (ESM, code splitting,
 * workspace packages from source). Exported so tests can bundle other entries exactly as the CLI is bundled.
 */
export const bundleOptions = ({ entryPoints, outdir }) => ({
  entryPoints,
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node22",
  conditions: ["@lathe/source"],
  // Prefer ES modules: some packages (jsonc-parser) ship a UMD "main" whose require() calls esbuild cannot follow.
  mainFields: ["module", "main"],
  // tree-sitter-bash is only ever `require.resolve`d (for its wasm), never imported; the list names it all the same.
  external: ["web-tree-sitter", "tree-sitter-bash", "@vscode/ripgrep"],
  // React (and any bundled code that asks) takes its production build: NODE_ENV is fixed when bundling.
  define: {
    "process.env.NODE_ENV": JSON.stringify("production"),
    __LATHE_VERSION__: JSON.stringify(cliVersion),
    __LATHE_COMMIT__: JSON.stringify(buildCommit)
  },
  // CommonJS dependencies inside an ESM bundle may call require() for Node built-ins.
  banner: {
    js: 'import { createRequire as __latheRequire } from "node:module"; const require = __latheRequire(import.meta.url);'
  },
  plugins: [
    inlineDescriptions,
    stubInkDevtools,
    stubGateway,
    stubLivekit,
    aiSdkHeadersWithoutUndici,
    webStreamsOnFirstUse,
    builtinsWithoutNamespace,
    zodEnglishOnly
  ],
  minify: process.env.LATHE_BUNDLE_MINIFY !== "0",
  legalComments: "linked",
  metafile: true,
  logLevel: "warning"
})

/** Whether node runs this file as its script (`node scripts/bundle.mjs`), not as an imported module. */
const isMain = () => {
  try {
    return process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)
  } catch {
    return false
  }
}

if (isMain()) {
  // esbuild never deletes: without this, every rebuild's old chunks would pile up in the outdir and get published.
  // `LATHE_BUNDLE_OUTDIR` (relative to the package) builds elsewhere, e.g. bench/loop-modules.ts's readable copy.
  const outdir = resolve(cli, process.env.LATHE_BUNDLE_OUTDIR ?? "dist/bundle")
  rmSync(outdir, { recursive: true, force: true })

  // `lathe run` is a build of its own (dist/bundle/run/run.cjs): esbuild tree-shakes per build, not per entry, so in
  // one build the run path would load every module the server and the cluster keep alive behind shared barrels
  // (about 400 KiB more of effect alone); and as CommonJS it can start from a code cache taken after a run.
  // The published CLI finds the bash grammar beside its bundle (builds from `bundleOptions` alone, for tests and
  // benchmarks, resolve it from node_modules as the sources do).
  const providersOptions = bundleOptions({
    entryPoints: Object.fromEntries(LAZY_SDKS.map((specifier) => [sdkFile(specifier), `lathe-sdk:${specifier}`])),
    outdir: join(outdir, "providers")
  })
  const providers = await build({ ...providersOptions, plugins: [sdkEntries, ...providersOptions.plugins] })
  const runOptions = runBuildOptions(join(outdir, "run"))
  const vendors = await build(runVendorsBuildOptions(join(outdir, "run")))
  const sides = await build(runSidePackagesBuildOptions(join(outdir, "run")))
  const run = await build({
    ...runOptions,
    plugins: [
      vendorsBesideRunBuild(vendorExports(join(outdir, "run")), sharedImports(sides.metafile)),
      sdksFromProvidersBuild("../"),
      ...runOptions.plugins,
      // Last: the files the plugins above load keep their own loader. The grammar and catalogue patches go through
      // it, so those files lose their barrel imports too.
      directImportsPlugin([grammarPatch(`../${GRAMMAR}`), catalogPatch(`../${CATALOG}`)])
    ]
  })
  // A new import of a side package's subpath not listed in `RUN_SIDE_PACKAGES` would put a second copy of its
  // modules into run.cjs (and compile it at every first run): stop the build instead.
  const sidePackages = new Set(
    Object.values(RUN_SIDE_PACKAGES).flatMap((packages) =>
      Object.keys(packages).map((specifier) =>
        specifier
          .split("/")
          .slice(0, specifier.startsWith("@") ? 2 : 1)
          .join("/")
      )
    )
  )
  const doubled = Object.keys(run.metafile.inputs).filter((input) =>
    [...sidePackages].some((name) => input.includes(`node_modules/${name}/`))
  )
  if (doubled.length > 0)
    throw new Error(
      `run.cjs holds modules of a side package (list its import in RUN_SIDE_PACKAGES): ${doubled.join(", ")}`
    )
  const main = await build(mainBuildOptions(outdir))
  const pruned = [
    ...pruneUnreached(run.metafile, [join(cli, "src/commands/run.ts")]),
    ...pruneUnreached(main.metafile, [join(cli, "src/bin.ts")])
  ]
  // The bash grammar (and its licence) from the tree-sitter-bash package this build resolves.
  const grammar = createRequire(join(cli, "package.json")).resolve(`tree-sitter-bash/${GRAMMAR}`)
  copyFileSync(grammar, join(outdir, GRAMMAR))
  copyFileSync(join(dirname(grammar), "LICENSE"), join(outdir, `${GRAMMAR}.LICENSE.txt`))
  writeFileSync(join(outdir, CATALOG), await catalogFile(join(cli, "..", "core", "src", "catalog", "snapshot.json")))
  // lathe.json's JSON Schema beside the bundle, for editors (a config's "$schema"): printed by the CLI just built
  // (`lathe config schema`, generated from the zod schema its config loader validates with), so the file shipped is
  // always the one that CLI checks against, never a copy to keep up to date.
  const schema = execFileSync(process.execPath, [join(outdir, "lathe.js"), "config", "schema"], {
    cwd: outdir,
    env: { PATH: process.env.PATH ?? "" },
    encoding: "utf8"
  })
  writeFileSync(join(outdir, CONFIG_SCHEMA), schema)
  // `lathe web`'s app, prebuilt by @lathe/web (its build runs before this one): static files beside the bundle, read
  // only by `lathe web` (nothing of it is imported, so no other command loads it).
  const webApp = join(cli, "..", "web", "dist", "app")
  mkdirSync(join(outdir, WEB_APP), { recursive: true })
  for (const name of readdirSync(webApp)) copyFileSync(join(webApp, name), join(outdir, WEB_APP, name))
  if (pruned.length > 0)
    process.stderr.write(
      `bundle: left out ${pruned.length} chunk(s) nothing imports: ${pruned.map((file) => relative(outdir, resolve(file))).join(", ")}\n`
    )
  const outputs = [
    ...Object.values(providers.metafile.outputs),
    ...Object.values(vendors.metafile.outputs),
    ...Object.values(sides.metafile.outputs),
    ...Object.values(run.metafile.outputs),
    ...Object.values(main.metafile.outputs)
  ]
  const bytes = outputs.reduce((sum, output) => sum + output.bytes, 0)
  process.stderr.write(`bundle: ${outputs.length} files, ${(bytes / 1024).toFixed(0)} KiB\n`)
}
