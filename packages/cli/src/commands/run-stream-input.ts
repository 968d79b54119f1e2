import type { CliIO } from "../io.js"

/** One line of `--input-format stream-json`: a user message's text, or why the line is not one. */
export type StreamInputTurn = { readonly text: string } | { readonly error: string }

/**
 * The text of a user message line, `{"type":"user","message":{"role":"user","content":"…" | [blocks]}}` (the lines
 * `claude -p --input-format stream-json` reads). Text blocks are joined; any other block (an image, a document) is
 * refused by name: attachments go with `-f`.
 */
export const streamInputTurn = (line: string, number: number): StreamInputTurn => {
  const refuse = (why: string) => ({ error: `stdin line ${number} ${why}` })
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch {
    return refuse("is not JSON.")
  }
  if (typeof value !== "object" || value === null || !("type" in value) || value.type !== "user")
    return refuse('is not a user message ({"type":"user","message":{"role":"user","content":…}}).')
  const message = "message" in value ? value.message : undefined
  if (typeof message !== "object" || message === null || !("content" in message))
    return refuse("has no message.content.")
  if ("role" in message && message.role !== "user") return refuse('has a message whose role is not "user".')
  const content = message.content
  if (typeof content === "string") return content.trim() === "" ? refuse("has an empty message.") : { text: content }
  if (!Array.isArray(content)) return refuse("has a message.content that is neither text nor a list of blocks.")
  const texts: Array<string> = []
  for (const block of content as ReadonlyArray<unknown>) {
    const type = typeof block === "object" && block !== null && "type" in block ? String(block.type) : "?"
    if (type !== "text" || !("text" in (block as object)) || typeof (block as { text: unknown }).text !== "string")
      return refuse(`has a content block of type "${type}": only text blocks are read (attach files with -f).`)
    texts.push((block as { text: string }).text)
  }
  const text = texts.join("\n\n")
  return text.trim() === "" ? refuse("has an empty message.") : { text }
}

/**
 * The turns on `stdin`, one user message per line, read as they come: a program can wait for a turn's `result` line
 * before it writes the next message. Blank lines are skipped.
 */
export async function* streamInputTurns(stdin: NodeJS.ReadableStream): AsyncGenerator<StreamInputTurn> {
  // Loaded here: a run with its message as an argument never reads stdin by lines.
  const { createInterface } = process.getBuiltinModule("node:readline")
  const lines = createInterface({ input: stdin, crlfDelay: Number.POSITIVE_INFINITY })
  let number = 0
  for await (const line of lines) {
    number++
    if (line.trim() === "") continue
    yield streamInputTurn(line, number)
  }
}

/** Why `--input-format stream-json` cannot be used with these arguments, if it cannot. */
export const streamInputRefusal = (
  values: { readonly command?: string | undefined },
  positionals: ReadonlyArray<string>,
  io: CliIO
): string | undefined => {
  if (positionals.length > 0 || values.command !== undefined)
    return "--input-format stream-json reads the messages from stdin: give no message (nor --command)."
  if (io.stdin === undefined) return "--input-format stream-json needs stdin, and there is none here."
  return undefined
}

/** The turns of a run: the one message, or (`--input-format stream-json`) stdin's lines as they come. */
export const turnsOf = (
  streamInput: boolean,
  message: string,
  io: CliIO
): AsyncIterable<StreamInputTurn> | Iterable<StreamInputTurn> =>
  streamInput && io.stdin !== undefined ? streamInputTurns(io.stdin) : [{ text: message }]
