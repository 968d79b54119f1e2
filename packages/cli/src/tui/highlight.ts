/**
 * Syntax highlighting for code blocks and diffs: lowlight (highlight.js 11) with its `common` languages, created
 * once on first use, mapped onto the UI's few terminal styles.
 */
import { common, createLowlight } from "lowlight"
import type { Style, StyleFn } from "../style.js"
import { plainText } from "../terminal-text.js"

type Lowlight = ReturnType<typeof createLowlight>

let instance: Lowlight | undefined
const lowlight = (): Lowlight => {
  instance ??= createLowlight(common)
  return instance
}

// The parts of a hast tree that lowlight produces: text nodes and spans with `hljs-*` class names.
interface HastNode {
  readonly type: string
  readonly value?: string
  readonly children?: ReadonlyArray<HastNode>
  readonly properties?: { readonly className?: unknown }
}

// highlight.js scope → style. Scopes not listed inherit their parent's style.
const scopeStyle = (scope: string, style: Style): StyleFn | undefined => {
  switch (scope) {
    case "hljs-keyword":
    case "hljs-selector-tag":
    case "hljs-doctag":
      return style.magenta
    case "hljs-built_in":
    case "hljs-type":
    case "hljs-class":
      return style.yellow
    case "hljs-string":
    case "hljs-regexp":
    case "hljs-symbol":
    case "hljs-template-tag":
    case "hljs-addition":
      return style.green
    case "hljs-number":
    case "hljs-literal":
      return style.yellow
    case "hljs-comment":
    case "hljs-quote":
      return style.gray
    case "hljs-title":
    case "hljs-section":
    case "hljs-name":
      return style.blue
    case "hljs-attr":
    case "hljs-attribute":
    case "hljs-property":
    case "hljs-selector-class":
    case "hljs-selector-id":
      return style.cyan
    case "hljs-meta":
      return style.gray
    case "hljs-variable":
    case "hljs-template-variable":
    case "hljs-deletion":
      return style.red
    default:
      return undefined
  }
}

/**
 * Walks the tree, appending styled text to `lines`; each source line's pieces are styled separately so every output
 * line is self-contained.
 */
const walk = (nodes: ReadonlyArray<HastNode>, current: StyleFn, style: Style, lines: Array<string>): void => {
  for (const node of nodes) {
    if (node.type === "text" && node.value !== undefined) {
      const pieces = node.value.split("\n")
      pieces.forEach((piece, i) => {
        if (i > 0) lines.push("")
        if (piece !== "") lines[lines.length - 1] += current(piece)
      })
    } else if (node.children) {
      const classes = node.properties?.className
      let next = current
      if (Array.isArray(classes))
        for (const c of classes) {
          const found = typeof c === "string" ? scopeStyle(c, style) : undefined
          if (found) next = found
        }
      walk(node.children, next, style, lines)
    }
  }
}

/** The grammar name for a fence info string (`ts {title="x"}` → `ts`), or undefined when lowlight lacks it. */
export const grammarFor = (lang: string | undefined): string | undefined => {
  const name = lang
    ?.trim()
    .split(/[\s{,]/)[0]
    ?.toLowerCase()
  if (!name) return undefined
  return lowlight().registered(name) ? name : undefined
}

// A streamed answer is re-rendered on every delta while its earlier code blocks stay the same: remember the last
// few highlighted blocks, per style object.
const CACHE_SIZE = 64
const caches = new WeakMap<Style, Map<string, ReadonlyArray<string>>>()

/** Tabs become 4 spaces and control characters go: a terminal must not interpret the code it shows. */
const clean = (code: string): string => plainText(code.replaceAll("\t", "    "))

/**
 * Syntax-highlights code (lang from a fence info string, may be undefined/unknown → plain); returns one string per
 * source line (not wrapped). Plain text when !style.color. Tabs are expanded to 4 spaces and escapes removed.
 */
export const highlightCode = (code: string, lang: string | undefined, style: Style): Array<string> => {
  const text = clean(code)
  if (!style.color) return text.split("\n")
  const grammar = grammarFor(lang)
  if (grammar === undefined) return text.split("\n")
  const key = `${grammar}\0${text}`
  let cache = caches.get(style)
  if (!cache) {
    cache = new Map()
    caches.set(style, cache)
  }
  const cached = cache.get(key)
  if (cached) {
    // Refresh its place: the map's insertion order is the eviction order.
    cache.delete(key)
    cache.set(key, cached)
    return [...cached]
  }
  try {
    const tree = lowlight().highlight(grammar, text)
    const lines = [""]
    walk(tree.children as ReadonlyArray<HastNode>, (s) => s, style, lines)
    cache.set(key, lines)
    if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value as string)
    return [...lines]
  } catch {
    // A grammar that throws on odd input must not break the transcript: show the code plain.
    return text.split("\n")
  }
}
