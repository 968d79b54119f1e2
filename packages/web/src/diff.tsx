import { useState } from "preact/hooks"

type Kind = "add" | "del" | "hunk" | "meta" | "same"

const kindOf = (line: string): Kind =>
  line.startsWith("+++") || line.startsWith("---") || line.startsWith("diff ") || line.startsWith("index ")
    ? "meta"
    : line.startsWith("+")
      ? "add"
      : line.startsWith("-")
        ? "del"
        : line.startsWith("@@")
          ? "hunk"
          : line.startsWith(" ") || line === ""
            ? "same"
            : // git's header lines (`new file mode`, `Binary files … differ`, `\ No newline at end of file`)
              "meta"

/** Rows of a side-by-side view: a run of removed lines is paired with the run of added lines that follows it. */
const sideBySide = (lines: ReadonlyArray<string>) => {
  const rows: Array<{ left?: string; right?: string; kind: Kind }> = []
  let i = 0
  while (i < lines.length) {
    const line = lines[i] ?? ""
    const kind = kindOf(line)
    if (kind === "del" || kind === "add") {
      const removed: Array<string> = []
      const added: Array<string> = []
      while (i < lines.length && kindOf(lines[i] ?? "") === "del") removed.push((lines[i++] ?? "").slice(1))
      while (i < lines.length && kindOf(lines[i] ?? "") === "add") added.push((lines[i++] ?? "").slice(1))
      for (let r = 0; r < Math.max(removed.length, added.length); r++)
        rows.push({
          ...(r < removed.length ? { left: removed[r] } : {}),
          ...(r < added.length ? { right: added[r] } : {}),
          kind: "same"
        })
      continue
    }
    rows.push(kind === "same" ? { left: line.slice(1), right: line.slice(1), kind } : { left: line, kind })
    i++
  }
  return rows
}

/** A unified diff (`git diff`), shown unified or side by side. */
export const Diff = ({ diff }: { readonly diff: string }) => {
  const [split, setSplit] = useState(false)
  if (diff === "") return <p>No change to the work tree.</p>
  const lines = diff.replace(/\n$/, "").split("\n")
  return (
    <>
      <button type="button" aria-pressed={split} onClick={() => setSplit(!split)}>
        Side by side
      </button>
      {split ? (
        <table class="diff split">
          <caption class="visually-hidden">Changes, before and after</caption>
          <tbody>
            {sideBySide(lines).map((row, i) =>
              row.kind === "meta" || row.kind === "hunk" ? (
                <tr key={i} class={row.kind}>
                  <td colSpan={2}>{row.left}</td>
                </tr>
              ) : (
                <tr key={i}>
                  <td class={row.left !== undefined && row.left !== row.right ? "del" : ""}>{row.left ?? ""}</td>
                  <td class={row.right !== undefined && row.left !== row.right ? "add" : ""}>{row.right ?? ""}</td>
                </tr>
              )
            )}
          </tbody>
        </table>
      ) : (
        <pre class="diff">
          {lines.map((line, i) => (
            <span key={i} class={kindOf(line)}>
              {line}
              {"\n"}
            </span>
          ))}
        </pre>
      )}
    </>
  )
}
