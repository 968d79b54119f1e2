/**
 * Line continuations: bash removes a backslash-newline before it splits words, so `r\` newline `m -rf x` runs `rm`.
 * The parser reads it as a word break instead; joining them first lets the analysis see what bash runs.
 */
import type { Node, Parser } from "web-tree-sitter"

/** Where a backslash-newline is kept as it is: single quotes, `$'…'`, comments, quoted here-document bodies. */
const KEPT = new Set(["raw_string", "ansi_c_string", "comment"])

const keptRanges = (root: Node): Array<readonly [number, number]> => {
  const ranges: Array<readonly [number, number]> = []
  const stack: Array<Node> = [root]
  while (stack.length > 0) {
    const node = stack.pop() as Node
    if (KEPT.has(node.type)) {
      ranges.push([node.startIndex, node.endIndex])
      continue
    }
    if (node.type === "heredoc_redirect") {
      // `<<'EOF'`, `<<"EOF"`, `<<\EOF`, `<<E"O"F`: a quoted delimiter keeps the body as written.
      const start = node.children.find((child) => child?.type === "heredoc_start")
      if (start && /['"\\]/.test(start.text))
        for (const child of node.children)
          if (child?.type === "heredoc_body") ranges.push([child.startIndex, child.endIndex])
    }
    for (const child of node.children) if (child) stack.push(child)
  }
  return ranges
}

/**
 * `text` with every line continuation joined as bash joins it: a backslash-newline whose backslash is not itself
 * escaped (an odd run of backslashes), outside single quotes, `$'…'`, comments and the bodies of here-documents with
 * a quoted delimiter (double quotes and plain here-document bodies are joined, as bash does).
 */
export const joinContinuations = (parser: Parser, text: string): string => {
  if (!text.includes("\\\n")) return text
  const tree = parser.parse(text)
  if (!tree) return text
  let ranges: Array<readonly [number, number]>
  try {
    ranges = keptRanges(tree.rootNode)
  } finally {
    tree.delete()
  }
  const kept = (index: number) => ranges.some(([start, end]) => index >= start && index < end)
  let out = ""
  let run = 0
  for (let index = 0; index < text.length; index++) {
    const char = text[index] as string
    if (char === "\n" && run % 2 === 1 && !kept(index - 1)) {
      out = out.slice(0, -1)
      run = 0
      continue
    }
    run = char === "\\" ? run + 1 : 0
    out += char
  }
  return out
}
