import { Lexer } from "marked"
import type { MarkdownBlocks } from "../render.js"
import type { Style } from "../style.js"
import { renderMarkdown } from "./markdown.js"

/**
 * The length of `source`'s leading blocks that are complete: everything before its last block, when that block is
 * preceded by a blank line or by a block nothing can extend (a heading, a fenced code block, a rule). 0 when none is.
 */
export const completePrefix = (source: string): number => {
  const tokens = new Lexer({ gfm: true }).lex(source)
  let last = tokens.length - 1
  while (last >= 0 && tokens[last]?.type === "space") last--
  if (last <= 0) return 0
  const before = tokens[last - 1]?.type
  if (before !== "space" && before !== "heading" && before !== "code" && before !== "hr") return 0
  const prefix = tokens
    .slice(0, last)
    .map((token) => token.raw)
    .join("")
  return source.startsWith(prefix) ? prefix.length : 0
}

/**
 * The model's answer as terminal Markdown (the interactive UI's renderer), for `lathe run` on a terminal. Loaded only
 * there: its syntax highlighter is too heavy for every start-up.
 */
export const answerMarkdown = (style: Style): MarkdownBlocks => ({
  complete: completePrefix,
  render: (source, columns) => renderMarkdown(source, columns, style)
})
