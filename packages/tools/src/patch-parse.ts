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

/** File headers, matched on a line with the blank space around it removed. */
const ADD = /^\*\*\*\s*Add File:\s*(.*)$/
const DELETE = /^\*\*\*\s*Delete File:\s*(.*)$/
const UPDATE = /^\*\*\*\s*Update File:\s*(.*)$/
const MOVE = /^\*\*\*\s*Move to:\s*(.*)$/
const END_OF_FILE = /^\*\*\*\s*End of File$/
const ANY_HEADER = [ADD, DELETE, UPDATE, MOVE, END_OF_FILE]

const invalid = (lineNo: number, line: string, expected: string): Error =>
  new Error(`Invalid patch at line ${lineNo}: "${line}". ${expected}`)

/**
 * The first line of a here-document wrapper, as models write one around a patch: `<<'EOF'`, `cat <<EOF`,
 * `apply_patch <<"PATCH"`, `<<-EOF`. The delimiter may be quoted in any way bash allows (`'EOF'`, `"EOF"`, `\EOF`,
 * `E"O"F`); quoting changes nothing for the patch text, so it is only unquoted.
 */
const HEREDOC_START = /^(?:(?:cat|apply_patch|applypatch)\s+)?<<-?\s*(\S+)$/

/** The patch inside a here-document wrapper, or the text itself when it is not wrapped. */
export const unwrapHeredoc = (text: string): string => {
  const lines = text.split("\n")
  const start = HEREDOC_START.exec(lines[0]?.trim() ?? "")
  if (!start || lines.length < 3) return text
  const delimiter = (start[1] ?? "").replace(/['"\\]/g, "")
  if (delimiter === "" || lines[lines.length - 1]?.trim() !== delimiter) return text
  return lines.slice(1, -1).join("\n").trim()
}

/**
 * Parses the `*** Begin Patch` format: `*** Add File: p` (then `+` lines), `*** Delete File: p`,
 * `*** Update File: p` (optionally `*** Move to: q`, then `@@` chunks of ` `, `-`, `+` lines and an optional
 * `*** End of File`), ending with `*** End Patch`. Accepts what models send besides: the whole patch wrapped in a
 * here-document (`cat <<'EOF'` … `EOF`, with or without `cat`, any quoting), and blank space around the `***`
 * lines. Inside an update, a line of one space and then text is always a context line, even when it reads like a
 * header. Throws an Error naming the offending line; a patch with no file in it is an error too.
 */
export const parsePatch = (patchText: string): Array<PatchHunk> => {
  const lines = unwrapHeredoc(patchText.replace(/\r\n/g, "\n").trim()).split("\n")
  if (lines[0]?.trim() !== BEGIN) throw new Error(`The patch must start with "${BEGIN}" on its first line.`)
  if (lines.length < 2 || lines[lines.length - 1]?.trim() !== END)
    throw new Error(`The patch must end with "${END}" on its last line.`)
  const hunks: Array<PatchHunk> = []
  let i = 1
  /** What follows the colon when line `i` is that header (blank space around it ignored); undefined if it is not. */
  const header = (pattern: RegExp, inUpdate = false): string | undefined => {
    const line = lines[i] ?? ""
    if (inUpdate && /^ \S/.test(line)) return undefined
    const match = pattern.exec(line.trim())
    return match ? (match[1] ?? "").trim() : undefined
  }
  const anyHeader = (inUpdate = false) => ANY_HEADER.some((pattern) => header(pattern, inUpdate) !== undefined)
  const path = (value: string, lineNo: number) => {
    if (value === "") throw invalid(lineNo, lines[lineNo - 1] ?? "", "A file header needs a path after the colon.")
    return value
  }
  while (i < lines.length - 1) {
    const line = lines[i] ?? ""
    const lineNo = i + 1
    const added = header(ADD)
    const deleted = header(DELETE)
    const updated = header(UPDATE)
    if (added !== undefined) {
      const body: Array<string> = []
      i++
      while (i < lines.length - 1 && !anyHeader()) {
        const content = lines[i] ?? ""
        if (!content.startsWith("+")) throw invalid(i + 1, content, "Every line of an added file starts with +.")
        body.push(content.slice(1))
        i++
      }
      hunks.push({ type: "add", path: path(added, lineNo), contents: body.length === 0 ? "" : `${body.join("\n")}\n` })
    } else if (deleted !== undefined) {
      hunks.push({ type: "delete", path: path(deleted, lineNo) })
      i++
    } else if (updated !== undefined) {
      i++
      const moved = header(MOVE)
      const movePath = moved === undefined ? undefined : path(moved, i + 1)
      if (moved !== undefined) i++
      const chunks: Array<PatchChunk> = []
      let current:
        | { context?: string; oldLines: Array<string>; newLines: Array<string>; endOfFile: boolean }
        | undefined
      const close = () => {
        if (current && (current.oldLines.length > 0 || current.newLines.length > 0)) chunks.push(current)
        current = undefined
      }
      while (i < lines.length - 1 && !(anyHeader(true) && header(END_OF_FILE, true) === undefined)) {
        const body = lines[i] ?? ""
        if (body.startsWith("@@")) {
          close()
          const context = body.slice(2).trim()
          current = { ...(context ? { context } : {}), oldLines: [], newLines: [], endOfFile: false }
        } else if (header(END_OF_FILE, true) !== undefined) {
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
      hunks.push({ type: "update", path: path(updated, lineNo), ...(movePath ? { movePath } : {}), chunks })
    } else {
      throw invalid(lineNo, line, "Expected *** Add File:, *** Delete File: or *** Update File:.")
    }
  }
  if (hunks.length === 0)
    throw new Error(
      `The patch is empty: there is no *** Add File:, *** Delete File: or *** Update File: section between ` +
        `"${BEGIN}" and "${END}", so nothing was changed. Send the changes to make.`
    )
  return hunks
}
