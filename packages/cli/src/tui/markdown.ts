/**
 * Markdown for the terminal: marked's lexer (GFM) turned into styled, wrapped lines. Called on every streamed delta
 * of a growing answer, so it accepts any prefix of a document (an unclosed fence shows as the code so far, a
 * half-written `**bold` as its literal text) and never throws.
 */
import { Lexer, type MarkedToken, type Token, type Tokens } from "marked"
import { type Style, stripAnsi } from "../style.js"
import { plainText } from "../terminal-text.js"
import { displayWidth, hardWrap, MIN_WIDTH, truncate, wrapText } from "../wrap.js"
import { highlightCode } from "./highlight.js"

/** What every block renderer needs besides its token. */
interface Context {
  readonly style: Style
  /** Nesting depth of lists, for the bullet shape. */
  readonly depth: number
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " }

/** Decodes the HTML entities marked leaves in text (`&amp;`, `&#39;`, `&#x2014;`); unknown ones stay as written. */
const decodeEntities = (s: string): string =>
  s.includes("&")
    ? s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
        if (name.startsWith("#")) {
          const code = name[1] === "x" || name[1] === "X" ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1))
          return code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff) ? String.fromCodePoint(code) : whole
        }
        return ENTITIES[name.toLowerCase()] ?? whole
      })
    : s

/** Renders inline tokens to one styled string; soft line breaks become spaces, hard breaks newlines. */
export const renderInline = (tokens: ReadonlyArray<Token> | undefined, style: Style): string => {
  let out = ""
  for (const token of tokens ?? []) out += inline(token, style)
  return out
}

// Extensions are not registered, so every token is one of marked's own (a `Generic` would only come from one).
const inline = (generic: Token, style: Style): string => {
  const token = generic as MarkedToken
  switch (token.type) {
    case "text":
      return token.tokens ? renderInline(token.tokens, style) : decodeEntities(token.text).replaceAll("\n", " ")
    case "escape":
      return token.text
    case "strong":
      return style.bold(renderInline(token.tokens, style))
    case "em":
      return style.italic(renderInline(token.tokens, style))
    case "del":
      return style.strike(renderInline(token.tokens, style))
    case "codespan":
      return style.cyan(decodeEntities(token.text).replaceAll("\n", " "))
    case "br":
      return "\n"
    case "link": {
      const text = renderInline(token.tokens, style)
      const plain = token.text
      if (plain === token.href || `mailto:${plain}` === token.href || `http://${plain}` === token.href)
        return style.blue(text)
      return `${style.blue(text)} ${style.dim(`(${token.href})`)}`
    }
    case "image":
      return style.dim(`[image${token.text ? `: ${token.text}` : ""}] (${token.href})`)
    case "html":
      return token.text.replaceAll("\n", " ")
    default:
      return token.raw
  }
}

const BULLETS = ["•", "◦", "▪"]

const list = (token: Tokens.List, width: number, ctx: Context): Array<string> => {
  const { style } = ctx
  const start = token.start === "" ? 1 : token.start
  const last = String(start + token.items.length - 1).length
  const markers = token.items.map((item, i) => {
    const box = item.task ? (item.checked ? style.green("[x]") : "[ ]") : ""
    const lead = token.ordered ? `${String(start + i).padStart(last)}.` : item.task ? "" : BULLETS[ctx.depth % 3]
    return lead && box ? `${lead} ${box}` : lead || box
  })
  const inner: Context = { style, depth: ctx.depth + 1 }
  const out: Array<string> = []
  token.items.forEach((item, i) => {
    if (i > 0 && token.loose) out.push("")
    const marker = markers[i] ?? ""
    // A hanging indent: wrapped and nested lines align under the item's text.
    const indent = stripAnsi(marker).length + 1
    const body = blocks(
      item.tokens.filter((t) => t.type !== "checkbox"),
      width - indent,
      inner,
      !token.loose
    )
    out.push(`${marker} ${body[0] ?? ""}`.trimEnd())
    for (const line of body.slice(1)) out.push(line === "" ? "" : " ".repeat(indent) + line)
  })
  return out
}

const code = (token: Tokens.Code, width: number, ctx: Context): Array<string> => {
  const { style } = ctx
  const lang = token.lang?.trim().split(/\s/)[0]
  const out: Array<string> = []
  if (lang) out.push(`  ${style.dim(truncate(lang, width - 2))}`)
  if (token.text === "" && token.codeBlockStyle !== "indented") return out
  for (const line of highlightCode(token.text, lang, style)) {
    for (const piece of hardWrap(line, width - 2)) out.push(piece === "" ? "" : `  ${piece}`)
  }
  return out
}

const align = (s: string, width: number, how: Tokens.TableCell["align"]): string => {
  const gap = Math.max(0, width - displayWidth(s))
  if (how === "right") return " ".repeat(gap) + s
  if (how === "center") return " ".repeat(Math.floor(gap / 2)) + s + " ".repeat(gap - Math.floor(gap / 2))
  return s + " ".repeat(gap)
}

/** Aligned columns (`a │ b`, a rule under the header) when they fit in `width`, else one `a · b` line per row. */
const table = (token: Tokens.Table, width: number, style: Style): Array<string> => {
  const cells = (row: ReadonlyArray<Tokens.TableCell>) => row.map((cell) => renderInline(cell.tokens, style))
  const header = cells(token.header).map((c) => style.bold(c))
  const rows = token.rows.map(cells)
  const columns = token.header.length
  const widths = Array.from({ length: columns }, (_, i) =>
    Math.max(displayWidth(header[i] ?? ""), ...rows.map((row) => displayWidth(row[i] ?? "")))
  )
  const fits =
    widths.reduce((a, b) => a + b, 0) + 3 * (columns - 1) <= width && !rows.flat().some((c) => c.includes("\n"))
  if (!fits)
    return [header, ...rows].flatMap((row) => wrapText(row.filter((c) => c !== "").join(style.dim(" · ")), width))
  const line = (row: ReadonlyArray<string>) =>
    widths
      .map((w, i) => align(row[i] ?? "", w, token.align[i] ?? null))
      .join(` ${style.dim("│")} `)
      .trimEnd()
  const rule = style.dim(widths.map((w) => "─".repeat(w)).join("─┼─"))
  return [line(header), rule, ...rows.map(line)]
}

const HEADING_STYLES: ReadonlyArray<(style: Style, s: string) => string> = [
  (style, s) => style.bold(style.underline(style.magenta(s))),
  (style, s) => style.bold(style.magenta(s)),
  (style, s) => style.bold(style.blue(s))
]

const block = (generic: Token, width: number, ctx: Context): Array<string> => {
  const { style } = ctx
  const token = generic as MarkedToken
  switch (token.type) {
    case "space":
    case "def":
      return []
    case "heading": {
      const styled = HEADING_STYLES[Math.min(token.depth, 3) - 1] ?? HEADING_STYLES[2]
      return wrapText(renderInline(token.tokens, style), width).map((line) => styled?.(style, line) ?? line)
    }
    case "paragraph":
      return wrapText(renderInline(token.tokens, style), width)
    case "text":
      return wrapText(token.tokens ? renderInline(token.tokens, style) : decodeEntities(token.text), width)
    case "code":
      return code(token, width, ctx)
    case "blockquote":
      return blocks(token.tokens, width - 2, ctx, false).map((line) => `${style.dim("│")} ${line}`.trimEnd())
    case "list":
      return list(token, width, ctx)
    case "hr":
      return [style.dim("─".repeat(width))]
    case "table":
      return table(token, width, style)
    case "html":
      return wrapText(token.text.replace(/\n+$/, ""), width)
    default:
      return wrapText(token.raw.replace(/\n+$/, ""), width)
  }
}

/** Renders block tokens; a blank line separates blocks unless `tight` (the blocks of a tight list item). */
const blocks = (tokens: ReadonlyArray<Token>, width: number, ctx: Context, tight: boolean): Array<string> => {
  const w = Math.max(1, width)
  const out: Array<string> = []
  for (const token of tokens) {
    const lines = block(token, w, ctx)
    if (lines.length === 0) continue
    if (out.length > 0 && !tight) out.push("")
    for (const line of lines) out.push(line)
  }
  return out
}

/**
 * Renders markdown for the terminal: every line at most `width` columns (widths under 10 count as 10). Escapes and
 * control characters in `text` are removed first, so the output's only escapes are `style`'s. Never throws: should
 * the lexer fail, the text is shown wrapped as it is.
 */
export const renderMarkdown = (text: string, width: number, style: Style): Array<string> => {
  const w = Math.max(MIN_WIDTH, Math.floor(Number.isFinite(width) ? width : MIN_WIDTH))
  const source = plainText(text.replaceAll("\t", "    "))
  try {
    const lines = blocks(new Lexer({ gfm: true }).lex(source), w, { style, depth: 0 }, false)
    // Deep nesting in a narrow terminal can leave less room than a marker needs: cut such lines rather than overflow.
    return lines.some((line) => displayWidth(line) > w) ? lines.flatMap((line) => hardWrap(line, w)) : lines
  } catch {
    return wrapText(source, w)
  }
}
