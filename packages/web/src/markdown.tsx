import type { ComponentChildren } from "preact"

/**
 * A small Markdown subset (fenced code, headings, lists, paragraphs, `code`, **bold**) rendered as elements, never
 * as HTML: the model's text cannot inject markup into the page.
 */
const inline = (text: string): ComponentChildren =>
  text
    .split(/(`[^`\n]+`|\*\*[^*\n]+\*\*)/g)
    .map((piece, i) =>
      piece.startsWith("`") && piece.endsWith("`") && piece.length > 1 ? (
        <code key={i}>{piece.slice(1, -1)}</code>
      ) : piece.startsWith("**") && piece.endsWith("**") && piece.length > 3 ? (
        <strong key={i}>{piece.slice(2, -2)}</strong>
      ) : (
        piece
      )
    )

const block = (text: string, key: number): ComponentChildren => {
  const lines = text.split("\n")
  const heading = /^(#{1,6})\s+(.*)$/.exec(text)
  if (heading && lines.length === 1)
    return (
      <p key={key} class="md-heading">
        <strong>{inline(heading[2] ?? "")}</strong>
      </p>
    )
  if (lines.every((l) => /^\s*[-*]\s+/.test(l)))
    return (
      <ul key={key}>
        {lines.map((l, i) => (
          <li key={i}>{inline(l.replace(/^\s*[-*]\s+/, ""))}</li>
        ))}
      </ul>
    )
  if (lines.every((l) => /^\s*\d+[.)]\s+/.test(l)))
    return (
      <ol key={key}>
        {lines.map((l, i) => (
          <li key={i}>{inline(l.replace(/^\s*\d+[.)]\s+/, ""))}</li>
        ))}
      </ol>
    )
  return <p key={key}>{inline(text)}</p>
}

export const Markdown = ({ text }: { readonly text: string }) => {
  const out: Array<ComponentChildren> = []
  const pieces = text.split(/^```[^\n]*\n([\s\S]*?)^```\s*$/m)
  for (const [i, piece] of pieces.entries()) {
    if (i % 2 === 1) {
      out.push(
        <pre key={`c${i}`}>
          <code>{piece}</code>
        </pre>
      )
      continue
    }
    const paragraphs = piece
      .split(/\n\s*\n/)
      .map((p) => p.trim())
      .filter((p) => p !== "")
    for (const [j, p] of paragraphs.entries()) out.push(block(p, i * 1000 + j))
  }
  return <div class="md">{out}</div>
}
