/** The tools whose successful calls write files, and so may leave them unformatted. */
export const FILE_TOOLS: ReadonlySet<string> = new Set(["write", "edit", "multiedit", "apply_patch"])

const ADD = "*** Add File:"
const UPDATE = "*** Update File:"
const MOVE = "*** Move to:"

/**
 * The paths an `apply_patch` patch leaves on disk, in patch order, as written in the patch (relative paths stay
 * relative): every `*** Add File:` and `*** Update File:` path, where a `*** Move to:` right after an update
 * replaces the updated path with its destination. Deleted files are not listed. Never throws: lines that are not
 * headers (hunk bodies start with ` `, `+`, `-` or `@@`) are ignored, so a malformed patch yields fewer paths.
 */
export const patchPaths = (patchText: string): Array<string> => {
  const paths: Array<string> = []
  let lastUpdate = -1
  for (const raw of patchText.split(/\r?\n/)) {
    const line = raw.trim()
    if (line.startsWith(ADD)) {
      paths.push(line.slice(ADD.length).trim())
      lastUpdate = -1
    } else if (line.startsWith(UPDATE)) {
      paths.push(line.slice(UPDATE.length).trim())
      lastUpdate = paths.length - 1
    } else if (line.startsWith(MOVE) && lastUpdate >= 0) {
      paths[lastUpdate] = line.slice(MOVE.length).trim()
      lastUpdate = -1
    } else if (line.startsWith("*** ") && !line.startsWith("*** End of File")) {
      lastUpdate = -1
    }
  }
  return [...new Set(paths.filter((path) => path.length > 0))]
}

/**
 * The file paths a call of `tool` wrote, as given in its arguments: `filePath` for `write`, `edit` and `multiedit`,
 * the patch headers of `patchText` for `apply_patch`, and nothing for any other tool or for arguments of the wrong
 * shape.
 */
export const touchedPaths = (tool: string, args: Readonly<Record<string, unknown>>): Array<string> => {
  if (tool === "apply_patch") return typeof args.patchText === "string" ? patchPaths(args.patchText) : []
  if (FILE_TOOLS.has(tool)) return typeof args.filePath === "string" && args.filePath !== "" ? [args.filePath] : []
  return []
}
