/** One `@@` section of an update: lines to find (context and `-`) and what replaces them (context and `+`). */
export interface PatchChunk {
  /** The text after `@@`, a line to find first (e.g. a function signature), if given. */
  readonly context?: string
  readonly oldLines: ReadonlyArray<string>
  readonly newLines: ReadonlyArray<string>
  /** `*** End of File` followed: the chunk applies at the end of the file. */
  readonly endOfFile: boolean
}

/** One file operation of a patch. */
export type PatchHunk =
  | { readonly type: "add"; readonly path: string; readonly contents: string }
  | { readonly type: "delete"; readonly path: string }
  | {
      readonly type: "update"
      readonly path: string
      readonly movePath?: string
      readonly chunks: ReadonlyArray<PatchChunk>
    }

const BEGIN = "*** Begin Patch"
const END = "*** End Patch"

const invalid = (lineNo: number, line: string, expected: string): Error =>
  new Error(`Invalid patch at line ${lineNo}: "${line}". ${expected}`)

/**
 * Parses the `*** Begin Patch` format: `*** Add File: p` (then `+` lines), `*** Delete File: p`,
 * `*** Update File: p` (optionally `*** Move to: q`, then `@@` chunks of ` `, `-`, `+` lines and an optional
 * `*** End of File`), ending with `*** End Patch`. Throws an Error naming the offending line.
 */
export const parsePatch = (patchText: string): Array<PatchHunk> => {
  const lines = patchText.replace(/\r\n/g, "\n").trim().split("\n")
  if (lines[0]?.trim() !== BEGIN) throw new Error(`The patch must start with "${BEGIN}" on its first line.`)
  if (lines[lines.length - 1]?.trim() !== END) throw new Error(`The patch must end with "${END}" on its last line.`)
  const hunks: Array<PatchHunk> = []
  let i = 1
  const header = (prefix: string) => lines[i]?.startsWith(prefix) === true
  while (i < lines.length - 1) {
    const line = lines[i] ?? ""
    const lineNo = i + 1
    if (header("*** Add File: ")) {
      const path = line.slice("*** Add File: ".length).trim()
      const body: Array<string> = []
      i++
      while (i < lines.length - 1 && !header("*** ")) {
        const content = lines[i] ?? ""
        if (!content.startsWith("+")) throw invalid(i + 1, content, "Every line of an added file starts with +.")
        body.push(content.slice(1))
        i++
      }
      hunks.push({ type: "add", path, contents: body.length === 0 ? "" : `${body.join("\n")}\n` })
    } else if (header("*** Delete File: ")) {
      hunks.push({ type: "delete", path: line.slice("*** Delete File: ".length).trim() })
      i++
    } else if (header("*** Update File: ")) {
      const path = line.slice("*** Update File: ".length).trim()
      i++
      let movePath: string | undefined
      if (header("*** Move to: ")) {
        movePath = (lines[i] ?? "").slice("*** Move to: ".length).trim()
        i++
      }
      const chunks: Array<PatchChunk> = []
      let current:
        | { context?: string; oldLines: Array<string>; newLines: Array<string>; endOfFile: boolean }
        | undefined
      const close = () => {
        if (current && (current.oldLines.length > 0 || current.newLines.length > 0)) chunks.push(current)
        current = undefined
      }
      while (i < lines.length - 1 && !(header("*** ") && !header("*** End of File"))) {
        const body = lines[i] ?? ""
        if (body.startsWith("@@")) {
          close()
          const context = body.slice(2).trim()
          current = { ...(context ? { context } : {}), oldLines: [], newLines: [], endOfFile: false }
        } else if (body === "*** End of File") {
          if (current) current.endOfFile = true
          close()
        } else {
          current ??= { oldLines: [], newLines: [], endOfFile: false }
          const mark = body[0] ?? " "
          const text = body.slice(1)
          if (mark === " " || body === "") {
            current.oldLines.push(text)
            current.newLines.push(text)
          } else if (mark === "-") current.oldLines.push(text)
          else if (mark === "+") current.newLines.push(text)
          else throw invalid(i + 1, body, "Lines of an update start with a space (context), - or +, or @@.")
        }
        i++
      }
      close()
      if (chunks.length === 0 && !movePath) throw invalid(lineNo, line, "An update needs at least one @@ chunk.")
      hunks.push({ type: "update", path, ...(movePath ? { movePath } : {}), chunks })
    } else {
      throw invalid(lineNo, line, "Expected *** Add File:, *** Delete File: or *** Update File:.")
    }
  }
  if (hunks.length === 0) throw new Error("The patch changes no files.")
  return hunks
}
