import { readFile, writeFile } from "node:fs/promises"
import { resolve } from "node:path"
import { Config, inTree, Paths } from "@lathe/core"
import { auditPath } from "@lathe/permission"
import { Effect } from "effect"
import { runOnStore } from "../app.js"
import { defineCommand, parseCommand } from "../command-kit.js"
import type { Command } from "../io.js"
import { decodeDocument, importDocument } from "../session-document.js"
import { renderMarkdown } from "../session-markdown.js"
import { plainText } from "../terminal-text.js"
import { documentJson, readDocument, targetOf } from "./session-show.js"

/** `lathe export`, declared once for the command kit. */
export const exportSpec = defineCommand({
  name: "export",
  usage: ["<id> | --last [--format md|json] [-o <file>]"],
  description: `Writes a whole stored session, its subagent sessions and the permission decisions made for its calls: as a
Markdown transcript (--format md, the default) or as a JSON document (--format json, the same as
\`lathe session show --json\`) that \`lathe import\` reads back into a store. Without -o it prints to stdout; an -o
file ending in .json picks JSON unless --format says otherwise. --last exports this work tree's latest session.`,
  options: {
    last: { type: "boolean", description: "This project's latest session" },
    format: {
      type: "string",
      short: "f",
      value: "md|json",
      choices: ["md", "json"],
      description: "A Markdown transcript (default) or the JSON document lathe import reads"
    },
    output: { type: "string", short: "o", value: "<file>", description: "Write to this file (default: stdout)" }
  },
  positionals: { name: "<id>" }
})

/** `lathe import`, declared once for the command kit. */
export const importSpec = defineCommand({
  name: "import",
  usage: ["<file>"],
  description: `Reads a session document written by \`lathe export --format json\` into the session store this project uses (with
its subagent sessions, and its permission decisions into the audit trail), keeping its ids, so \`lathe session show
<id>\` and \`lathe run --session <id>\` find it. A session the store already holds is never overwritten.`,
  positionals: { name: "<file>", min: 1, max: 1 }
})

/** `lathe export`: a stored session as a Markdown transcript or a JSON document. */
export const exportCommand: Command = async (args, io) => {
  const parsed = parseCommand(exportSpec, args, io)
  if (typeof parsed === "number") return parsed
  const { values } = parsed
  const format = values.format ?? (values.output?.toLowerCase().endsWith(".json") ? "json" : "md")
  const target = targetOf(parsed.positionals, values.last)
  if (typeof target === "string") {
    io.stderr(`lathe export: ${target}.\n`)
    return 2
  }
  const result = await readDocument(io, target)
  if (!result.ok) {
    io.stderr(`lathe export: ${result.message}\n`)
    return 1
  }
  const text = format === "json" ? documentJson(result.value) : renderMarkdown(result.value)
  if (values.output === undefined) {
    io.stdout(text)
    return 0
  }
  const file = resolve(io.cwd, values.output)
  try {
    // A transcript holds file contents and command output: readable by its owner only.
    await writeFile(file, text, { mode: 0o600 })
  } catch (error) {
    io.stderr(`lathe export: cannot write ${file}: ${error instanceof Error ? error.message : String(error)}\n`)
    return 1
  }
  io.stderr(`Wrote session ${result.value.session.id} to ${file} (${format === "json" ? "JSON" : "Markdown"}).\n`)
  return 0
}

/** `lathe import`: a JSON session document back into the store. */
export const importCommand: Command = async (args, io) => {
  const parsed = parseCommand(importSpec, args, io)
  if (typeof parsed === "number") return parsed
  const [name = ""] = parsed.positionals
  const file = resolve(io.cwd, name)
  let text: string
  try {
    text = await readFile(file, "utf8")
  } catch (error) {
    io.stderr(`lathe import: cannot read ${file}: ${error instanceof Error ? error.message : String(error)}\n`)
    return 1
  }
  const result = await runOnStore(
    io,
    Effect.gen(function* () {
      for (const notice of (yield* Config).notices) io.stderr(`lathe: ${plainText(notice)}\n`)
      const paths = yield* Paths
      const doc = yield* decodeDocument(text, file)
      const counts = yield* importDocument(doc, auditPath(paths.data))
      const elsewhere =
        doc.session.projectID !== paths.projectID ? "project" : !inTree(doc.session, paths.root) ? "tree" : undefined
      return { doc, counts, elsewhere }
    })
  )
  if (!result.ok) {
    io.stderr(`lathe import: ${result.message}\n`)
    return 1
  }
  const { doc, counts, elsewhere } = result.value
  const subagents = counts.sessions - 1
  io.stdout(
    `Imported session ${doc.session.id} (${counts.messages} messages${subagents > 0 ? `, ${subagents} subagent session${subagents === 1 ? "" : "s"}` : ""}). ` +
      `Show it with \`lathe session show ${doc.session.id}\`.\n`
  )
  if (elsewhere)
    io.stderr(
      `It belongs to another ${elsewhere === "project" ? "project" : "work tree"} (${doc.session.tree ?? doc.session.directory}), ` +
        "so `lathe session list` here does not list it (`--all-trees` lists another tree's); `lathe session show` and " +
        "`lathe export` take its id anywhere, and `lathe run --session` continues it in its own tree.\n"
    )
  return 0
}
