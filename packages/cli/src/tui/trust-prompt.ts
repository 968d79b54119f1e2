import type { IgnoredFile, UntrustedItem } from "@lathe/core"
import { plainText } from "../terminal-text.js"

/** A value from an untrusted file, on one line: strings as JSON strings, long values cut. */
const show = (value: unknown): string => {
  const text = typeof value === "string" ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value))
  const clean = plainText(text)
  return clean.length > 160 ? `${clean.slice(0, 159)}…` : clean
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** An MCP server as what it would run or reach: its command line, or its URL. */
const server = (value: unknown): string => {
  if (!isRecord(value)) return show(value)
  if (Array.isArray(value.command)) return `runs ${plainText(value.command.map(String).join(" "))}`
  if (typeof value.url === "string") return `connects to ${plainText(value.url)}`
  return show(value)
}

/** The lines for one dropped item: its name, and what it asked for (a plugin's specs, each MCP server). */
const itemLines = (item: UntrustedItem): Array<string> => {
  const name = plainText(item.name)
  if (!("value" in item)) return [`  • ${name}`]
  const { value } = item
  if (name === "plugin" && Array.isArray(value))
    return [
      "  • plugin (runs its code inside Lathe):",
      ...value.map((spec) => `      ${plainText(Array.isArray(spec) ? String(spec[0]) : String(spec))}`)
    ]
  if (name.startsWith("mcp") && isRecord(value))
    return [
      "  • mcp servers:",
      ...Object.entries(value).map(([id, config]) => `      ${plainText(id)}: ${server(config)}`)
    ]
  return [`  • ${name}: ${show(value)}`]
}

/**
 * What the trust prompt shows: for each project file, every item its config asked for and did not get, with the
 * value it asked for (the plugin path, the MCP server's command or URL, the provider's `baseURL`, the allow rules).
 * Values come from files the person has not trusted: control characters and escape sequences are removed.
 */
export const trustPromptLines = (ignored: ReadonlyArray<IgnoredFile>): Array<string> =>
  ignored.flatMap((file) => [`${plainText(file.file)} asks for:`, ...file.items.flatMap(itemLines)])
