/** `lathe mcp add|remove`: edits the `mcp` block of the person's own config file, keeping its comments. */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { McpServerConfig } from "@lathe/core"
import { applyEdits, type FormattingOptions, modify, type ParseError, parse, printParseErrorCode } from "jsonc-parser"
import { defineCommand, type Parsed, parseCommand } from "../command-kit.js"
import { userConfigFile } from "../connect-config.js"
import type { CliIO } from "../io.js"

const FORMAT: FormattingOptions = { insertSpaces: true, tabSize: 2, eol: "\n" }
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/

/** `lathe mcp add`, declared once for the command kit. */
export const addSpec = defineCommand({
  name: "mcp add",
  summary: "Add a local (-- <command>) or remote (--url) server to your own config",
  usage: [
    "<name> [--env K=V]... [--timeout ms] [--wait] [--force] -- <command> [args...]",
    "<name> --url <url> [--header K=V]... [--timeout ms] [--wait] [--no-oauth] [--force]"
  ],
  description: `Adds a local server (started over stdio) or a remote one (Streamable HTTP, falling back to SSE) to your own
config (<config dir>/lathe.jsonc if it exists, else lathe.json), keeping its comments.`,
  options: {
    url: { type: "string", value: "<url>", description: "The remote server's URL" },
    header: {
      type: "string",
      multiple: true,
      value: "K=V",
      description: "A header sent to a remote server (repeatable)"
    },
    env: {
      type: "string",
      multiple: true,
      value: "K=V",
      description: "A variable set for a local server (repeatable)"
    },
    timeout: { type: "string", value: "<ms>", description: "How long it may take to connect (default 10000)" },
    wait: {
      type: "boolean",
      description: "Runs wait for it before their first model request (else its tools arrive once it has connected)"
    },
    "no-oauth": { type: "boolean", description: "Never sign in to the remote server with OAuth" },
    force: { type: "boolean", description: "Replace a server of the same name" }
  },
  positionals: { name: "<name>" }
})

/** `lathe mcp remove`, declared once for the command kit. */
export const removeSpec = defineCommand({
  name: "mcp remove",
  summary: "Remove a server from your own config (a project's servers are edited in its own files)",
  usage: ["<name>"],
  positionals: { name: "<name>" }
})

/** The file's text and value, or a message naming the first syntax error. */
const read = (file: string): { text: string; value: unknown } | string => {
  const text = existsSync(file) ? readFileSync(file, "utf8") : ""
  if (text.trim() === "") return { text: "{}\n", value: {} }
  const errors: Array<ParseError> = []
  const value: unknown = parse(text, errors, { allowTrailingComma: true })
  const first = errors[0]
  if (first) {
    const line = text.slice(0, first.offset).split("\n").length
    return `${file}:${line}: ${printParseErrorCode(first.error)}. Fix the file, then run this again.`
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return `${file} does not hold a JSON object. Fix the file, then run this again.`
  return { text, value }
}

const servers = (value: unknown): Record<string, unknown> => {
  const mcp = typeof value === "object" && value !== null ? (value as Record<string, unknown>).mcp : undefined
  return typeof mcp === "object" && mcp !== null ? (mcp as Record<string, unknown>) : {}
}

/** `K=V` pairs to an object; a pair without `=` is a message. */
const pairs = (flag: string, items: ReadonlyArray<string> | undefined): Record<string, string> | string => {
  const out: Record<string, string> = {}
  for (const item of items ?? []) {
    const at = item.indexOf("=")
    if (at <= 0) return `--${flag} takes KEY=VALUE (got "${item}").`
    out[item.slice(0, at)] = item.slice(at + 1)
  }
  return out
}

/** What `add` writes. */
interface Addition {
  readonly name: string
  readonly server: McpServerConfig
  readonly force: boolean
}

/** The server `add` writes, validated like config; or a message for the person. */
const additionFrom = (
  { positionals, values }: Parsed<(typeof addSpec)["options"] & {}>,
  command: ReadonlyArray<string>
): Addition | string => {
  const [name, ...extra] = positionals
  if (!name) return "name the server: lathe mcp add <name> -- <command...>, or lathe mcp add <name> --url <url>."
  if (!NAME.test(name)) return `"${name}" is not a server name: use letters, digits, "_", "-" and ".".`
  if (extra.length > 0) return `unexpected "${extra.join(" ")}": put the server's command after "--".`
  const timeout = values.timeout === undefined ? undefined : Number(values.timeout)
  if (timeout !== undefined && !(Number.isInteger(timeout) && timeout > 0))
    return `--timeout takes a number of milliseconds (got "${values.timeout}").`
  const headers = pairs("header", values.header)
  const env = pairs("env", values.env)
  if (typeof headers === "string") return headers
  if (typeof env === "string") return env
  const remote = values.url !== undefined
  if (remote === command.length > 0)
    return remote
      ? 'give either --url (a remote server) or a command after "--" (a local one), not both.'
      : 'give the server\'s command after "--" (e.g. lathe mcp add files -- npx -y my-mcp-server), or --url.'
  if (remote && values.env) return "--env is for local servers; a remote server takes --header."
  if (!remote && (values.header || values["no-oauth"])) return "--header and --no-oauth are for remote servers (--url)."
  const server = remote
    ? {
        type: "remote",
        url: values.url,
        ...(Object.keys(headers).length > 0 ? { headers } : {}),
        ...(values["no-oauth"] ? { oauth: false } : {}),
        ...(timeout !== undefined ? { timeout } : {}),
        ...(values.wait ? { wait: true } : {})
      }
    : {
        type: "local",
        command: [...command],
        ...(Object.keys(env).length > 0 ? { env } : {}),
        ...(timeout !== undefined ? { timeout } : {}),
        ...(values.wait ? { wait: true } : {})
      }
  const checked = McpServerConfig.safeParse(server)
  if (!checked.success) return `the server is not valid: ${checked.error.issues.map((i) => i.message).join("; ")}.`
  // The object as built (not zod's output) is written, so the file gets exactly the fields the person gave.
  return { name, server: server as McpServerConfig, force: values.force === true }
}

const write = (file: string, text: string, path: ReadonlyArray<string>, value: unknown): void => {
  mkdirSync(join(file, ".."), { recursive: true })
  writeFileSync(file, applyEdits(text, modify(text, [...path], value, { formattingOptions: FORMAT })))
}

/** `lathe mcp add …`: adds one server to the person's config. */
export const addServer = async (args: ReadonlyArray<string>, io: CliIO): Promise<number> => {
  // The server's own command follows "--"; only what comes before it is lathe's.
  const dash = args.indexOf("--")
  const ours = parseCommand(addSpec, dash === -1 ? args : args.slice(0, dash), io)
  if (typeof ours === "number") return ours
  const parsed = additionFrom(ours, dash === -1 ? [] : args.slice(dash + 1))
  if (typeof parsed === "string") {
    io.stderr(`lathe mcp add: ${parsed}\n`)
    return 2
  }
  const { name, server, force } = parsed
  const file = userConfigFile(io.env)
  const current = read(file)
  if (typeof current === "string") {
    io.stderr(`lathe mcp add: ${current}\n`)
    return 1
  }
  if (name in servers(current.value) && !force) {
    io.stderr(`lathe mcp add: ${file} already has a server "${name}"; pass --force to replace it.\n`)
    return 1
  }
  write(file, current.text, ["mcp", name], server)
  io.stdout(`Added the MCP server "${name}" to ${file}. Check it with: lathe mcp list\n`)
  return 0
}

/** `lathe mcp remove <name>`: removes one server from the person's config (an emptied `mcp` goes too). */
export const removeServer = async (args: ReadonlyArray<string>, io: CliIO): Promise<number> => {
  const parsedArgs = parseCommand(removeSpec, args, io)
  if (typeof parsedArgs === "number") return parsedArgs
  const [name, ...extra] = parsedArgs.positionals
  if (!name || extra.length > 0) {
    io.stderr("lathe mcp remove: name one server, e.g. lathe mcp remove github (see lathe mcp list).\n")
    return 2
  }
  const file = userConfigFile(io.env)
  const current = read(file)
  if (typeof current === "string") {
    io.stderr(`lathe mcp remove: ${current}\n`)
    return 1
  }
  const known = servers(current.value)
  if (!(name in known)) {
    io.stderr(
      `lathe mcp remove: ${existsSync(file) ? file : "your config"} has no MCP server "${name}". ` +
        "A project's servers (its lathe.json or .mcp.json) are removed by editing those files.\n"
    )
    return 1
  }
  write(file, current.text, Object.keys(known).length === 1 ? ["mcp"] : ["mcp", name], undefined)
  io.stdout(`Removed the MCP server "${name}" from ${file}.\n`)
  return 0
}
