import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { basename, dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { Config, Paths, Plugins } from "@lathe/core"
import { resolveServers } from "@lathe/mcp/host"
import { Effect } from "effect"
import { runOnApp } from "../app.js"
import { defineCommand, parseCommand, pickSubcommand } from "../command-kit.js"
import type { CliIO, Command } from "../io.js"

const listSpec = defineCommand({
  name: "plugin list",
  summary:
    "Every plugin this project loads: where it came from, its hooks, tools, agents and commands, and why some failed",
  description: `Every plugin this project loads: where it came from, its hooks, tools, agents and commands, and the plugins
that failed to load with what to do about it.`,
  options: { json: { type: "boolean", description: "Print them as JSON" } }
})

const initSpec = defineCommand({
  name: "plugin init",
  summary: "Scaffold a publishable plugin package in ./<name>",
  usage: ["<name>"],
  description: `Scaffolds a publishable plugin package in ./<name> (package.json, tsconfig.json, src/index.ts with a hook, a
tool, a command and a resource on @lathe/plugin, tests with its harness, README). It depends on the author kit alone:
run from a checkout of Lathe, on that checkout's packages/plugin (file:), so npm install works before it is on npm;
installed from npm, on the same version as this CLI.`,
  positionals: { name: "<name>", max: 1 }
})

/** `lathe plugin`, declared once for the command kit. */
export const pluginSpec = defineCommand({
  name: "plugin",
  usage: ["<list | init <name>> [options]"],
  description: `Plugins load from the built-ins, then lathe.json "plugin" (package names, paths, ["name", { options }]), then
.lathe/plugins/*.{ts,mts,js,mjs} (trusted projects only) and ~/.config/lathe/plugins/. See docs/plugins.md.`,
  subcommands: [listSpec, initSpec]
})

const list = async (json: boolean, io: CliIO): Promise<number> => {
  const program = Effect.gen(function* () {
    const plugins = yield* Plugins
    const config = yield* Config
    const paths = yield* Paths
    const commands = yield* plugins.commands
    return { plugins, config, paths, commands }
  })
  // MCP servers are not started to list plugins: their tools are listed by `lathe mcp tools <server>`.
  const result = await runOnApp(io, program, { mcp: false })
  if (!result.ok) {
    io.stderr(`lathe plugin list: ${result.message}\n`)
    return 1
  }
  const { plugins, config, paths, commands } = result.value
  if (json) {
    io.stdout(`${JSON.stringify({ loaded: plugins.list, failed: plugins.failed }, null, 2)}\n`)
    return plugins.failed.length > 0 ? 1 : 0
  }
  const lines: Array<string> = []
  for (const plugin of plugins.list) {
    lines.push(`${plugin.name}  (${plugin.source})`)
    if (plugin.hooks.length > 0) lines.push(`  hooks:  ${plugin.hooks.join(", ")}`)
    if (plugin.tools.length > 0) lines.push(`  tools:  ${plugin.tools.join(", ")}`)
    if (plugin.agents.length > 0) lines.push(`  agents: ${plugin.agents.join(", ")}`)
    const own = commands.filter((command) => command.plugin === plugin.name).map((command) => `/${command.name}`)
    if (own.length > 0) lines.push(`  commands: ${own.join(", ")}`)
  }
  for (const failure of plugins.failed) lines.push(`✗ ${failure.message}`)
  const { servers: resolved } = await resolveServers({
    config: config.info,
    root: paths.root,
    trusted: config.trusted,
    env: io.env
  })
  const servers = resolved.filter((server) => server.enabled !== false).map((server) => server.name)
  if (servers.length > 0)
    lines.push(
      `@lathe/mcp  (MCP servers: ${servers.join(", ")}; not started here, see \`lathe mcp list\` and \`lathe mcp tools <server>\`)`
    )
  if (!config.trusted)
    lines.push("(this project is not trusted: its lathe.json plugins and .lathe/plugins are not loaded)")
  io.stdout(`${lines.join("\n")}\n`)
  return plugins.failed.length > 0 ? 1 : 0
}

/**
 * Where a new plugin's Lathe packages come from: this checkout (`path` is its `packages/core`; the kit is
 * `packages/plugin` beside it) when the CLI runs from a checkout of Lathe (its `@lathe/cli` folder is
 * `<checkout>/packages/cli`), else the npm version the CLI itself has.
 */
export type CoreSource =
  | { readonly kind: "checkout"; readonly path: string }
  | { readonly kind: "npm"; readonly version: string }

/** Finds {@link CoreSource} from this module's location: `src/commands/`, `dist/…` or `dist/bundle/`. */
export const coreSource = (from: string = fileURLToPath(import.meta.url)): CoreSource => {
  let dir = dirname(from)
  for (let up = 0; up < 5; up++, dir = dirname(dir)) {
    let pkg: { readonly name?: unknown; readonly version?: unknown }
    try {
      pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as typeof pkg
    } catch {
      continue
    }
    if (pkg.name !== "@lathe/cli") continue
    const core = join(dirname(dir), "core")
    if (basename(dirname(dir)) === "packages" && existsSync(join(core, "package.json")))
      return { kind: "checkout", path: core }
    return { kind: "npm", version: typeof pkg.version === "string" ? pkg.version : "0.0.0" }
  }
  return { kind: "npm", version: "0.0.0" }
}

/** The vitest config of a scaffold whose `@lathe/plugin` is a checkout's: its source, so no build is needed. */
const checkoutVitestConfig = (kit: string) => `import { defineConfig } from "vitest/config"

// @lathe/plugin comes from the Lathe checkout at ${dirname(dirname(kit))} (a file: dependency, until it is on npm):
// load its TypeScript source, so the checkout needs no build. When you switch package.json to a published version,
// delete this file (and "customConditions" in tsconfig.json).
export default defineConfig({
  resolve: { conditions: ["@lathe/source"] },
  ssr: { resolve: { conditions: ["@lathe/source"] } }
})
`

/** The scaffold's tsconfig.json: strict, type-checks `src` and `test` only (`npm run typecheck`). */
const tsconfig = (checkout: boolean) =>
  `${JSON.stringify(
    {
      compilerOptions: {
        module: "nodenext",
        moduleResolution: "nodenext",
        target: "es2023",
        lib: ["es2024"],
        types: ["node"],
        // A checkout's @lathe/plugin has no build: read its source (it imports effect and zod only).
        ...(checkout ? { customConditions: ["@lathe/source"] } : {}),
        strict: true,
        exactOptionalPropertyTypes: true,
        noUncheckedIndexedAccess: true,
        verbatimModuleSyntax: true,
        skipLibCheck: true,
        noEmit: true
      },
      include: ["src", "test"]
    },
    null,
    2
  )}\n`

/** The files of a new plugin package. */
const scaffold = (name: string, source: CoreSource): Record<string, string> => {
  const id = name.replace(/^@[^/]+\//, "")
  const kit = source.kind === "checkout" ? `file:${join(dirname(source.path), "plugin")}` : `^${source.version}`
  return {
    "package.json": `${JSON.stringify(
      {
        name,
        version: "0.1.0",
        description: `A Lathe plugin: ${id}`,
        type: "module",
        exports: { ".": "./src/index.ts" },
        files: ["src"],
        keywords: ["lathe-plugin"],
        scripts: { test: "vitest run", typecheck: "tsc" },
        peerDependencies: { "@lathe/plugin": source.kind === "checkout" ? "*" : kit },
        devDependencies: {
          "@lathe/plugin": kit,
          "@types/node": "24.19.2",
          typescript: "6.0.3",
          vitest: "5.1.1",
          zod: "4.6.7"
        }
      },
      null,
      2
    )}\n`,
    "tsconfig.json": tsconfig(source.kind === "checkout"),
    ...(source.kind === "checkout" ? { "vitest.config.ts": checkoutVitestConfig(kit.slice("file:".length)) } : {}),
    "src/index.ts": `import { definePlugin, Tool } from "@lathe/plugin"
import { z } from "zod"

const countWords = (text: string): number => text.split(/\\s+/).filter(Boolean).length

/** ${id}: a line in the system prompt, a \`word_count\` tool, a \`/wc\` command and a \`words:help\` resource. */
export default definePlugin({
  name: "${name}",
  setup: async (ctx) => ({
    "system.transform": async (_input, output) => {
      output.system.push(\`This project lives in \${ctx.root}.\`)
    },
    tools: [
      Tool.define("word_count", {
        description: "Counts the words of a text.",
        parameters: z.object({ text: z.string() }),
        mutates: false,
        execute: async ({ text }) => ({ title: "word count", output: String(countWords(text)) })
      })
    ],
    commands: [
      {
        name: "wc",
        description: "Asks the model to count words with word_count",
        arguments: [{ name: "text", required: true }],
        // A command answers with the prompt to send: text (as here), parts, or a Promise of either.
        run: (args) => {
          if (args.length === 0) throw new Error("Give the text to count: /wc some words")
          return \`Count the words of "\${args.join(" ")}" with the word_count tool.\`
        }
      }
    ],
    resources: {
      list: () => [{ uri: "words:help", name: "How words are counted" }],
      read: () => [{ type: "text", text: "Words are runs of characters between spaces.", synthetic: true }]
    }
  })
})
`,
    "test/index.test.ts": `import { pluginContext, readResource, runCommand, runTool } from "@lathe/plugin/testing"
import { describe, expect, it } from "vitest"
import plugin from "../src/index.js"

describe("${name}", () => {
  it("adds its line to the system prompt", async () => {
    const hooks = await plugin.setup(pluginContext("/project"))
    const output = { system: ["You are Lathe."] }
    const step = { sessionID: "s", agent: "build", model: { providerID: "p", modelID: "m" }, permission: [] }
    await hooks["system.transform"]?.(step, output)
    expect(output.system).toEqual(["You are Lathe.", "This project lives in /project."])
  })

  it("counts words with its tool", async () => {
    const tools = (await plugin.setup(pluginContext("/project"))).tools ?? []
    const wordCount = tools.find((tool) => tool.id === "word_count")
    if (!wordCount) throw new Error("no word_count tool")
    const result = await runTool(wordCount, { text: "one two three" })
    expect(result.output).toBe("3")
    await expect(runTool(wordCount, { text: 3 })).rejects.toMatchObject({ _tag: "ToolInvalidArguments" })
  })

  it("expands /wc to a prompt, and refuses it without text", async () => {
    const { text } = await runCommand(plugin, "wc", ["one", "two"])
    expect(text).toBe('Count the words of "one two" with the word_count tool.')
    await expect(runCommand(plugin, "wc", [])).rejects.toThrow("Give the text to count")
  })

  it("reads its resource", async () => {
    const [part] = await readResource(plugin, "words:help")
    expect(part).toMatchObject({ type: "text", synthetic: true })
  })
})
`,
    "README.md": `# ${name}

A [Lathe](https://github.com/lathe-dev/lathe) plugin. It adds a line about the project to the system prompt, a
\`word_count\` tool, a \`/wc\` command and a \`words:help\` resource (\`@words:help\` in a prompt).

## Install

\`\`\`sh
npm i -D ${name}
\`\`\`

then in \`lathe.json\` (a trusted project, or \`~/.config/lathe/lathe.json\`):

\`\`\`json
{ "plugin": ["${name}"] }
\`\`\`

## Develop

\`\`\`sh
npm install
npm test            # the plugin's hooks, tool, command and resource, with @lathe/plugin/testing
npm run typecheck
\`\`\`

To test a whole turn of Lathe's loop against a scripted model, add Lathe's host (\`npm i -D @lathe/core\`) and use
\`runPluginTurn\` from \`@lathe/plugin/testing\`: it returns the turn's \`events\` and \`toolResults\`
([the author kit's README](https://github.com/lathe-dev/lathe/tree/main/packages/plugin#readme)).
${
  source.kind === "checkout"
    ? `
\`@lathe/plugin\` comes from the Lathe checkout at \`${dirname(source.path)}\` (\`file:\` in package.json, and
\`vitest.config.ts\` and \`tsconfig.json\` read its source) while it is not on npm. Once it is, set its version in
package.json, delete \`vitest.config.ts\` and \`customConditions\` in \`tsconfig.json\`.
`
    : ""
}`
  }
}

const init = (args: ReadonlyArray<string>, io: CliIO): number => {
  const name = args[0]
  if (!name || !/^(@[a-z0-9-]+\/)?[a-z0-9][a-z0-9._-]*$/.test(name)) {
    io.stderr(
      'lathe plugin init: give the package name, e.g. lathe plugin init lathe-plugin-jira (lowercase, "-", ".").\n'
    )
    return 2
  }
  const dir = resolve(io.cwd, name.replace(/^@[^/]+\//, ""))
  if (existsSync(dir)) {
    io.stderr(`lathe plugin init: ${dir} already exists; choose another name or remove it.\n`)
    return 1
  }
  const source = coreSource()
  const files = scaffold(name, source)
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(join(dir, file, ".."), { recursive: true })
    writeFileSync(join(dir, file), content)
  }
  const from =
    source.kind === "checkout"
      ? `@lathe/plugin comes from this Lathe checkout (file:${join(dirname(source.path), "plugin")}), until it is on npm.\n`
      : ""
  io.stdout(`Created ${dir}: ${Object.keys(files).join(", ")}.\n${from}Next: cd ${dir} && npm install && npm test\n`)
  return 0
}

/** `lathe plugin list` / `lathe plugin init <name>`. */
export const pluginCommand: Command = async (args, io) => {
  const sub = pickSubcommand(pluginSpec, args, io)
  if (typeof sub === "number") return sub
  const parsed = parseCommand(sub.name === "list" ? listSpec : initSpec, sub.rest, io)
  if (typeof parsed === "number") return parsed
  if (sub.name === "list") return list(parsed.values.json === true, io)
  return init(parsed.positionals, io)
}
