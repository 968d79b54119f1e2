/** The tools whose calls change files, and the files a call changed, read from its arguments. */
export const EDIT_TOOLS: ReadonlySet<string> = new Set(["write", "edit", "multiedit", "apply_patch"])

/** `*** Add File: p`, `*** Update File: p` and `*** Move to: p` headers of an apply_patch patch. */
const PATCH_HEADER = /^\*\*\* (Add File|Update File|Move to): (.+)$/

/**
 * The files an edit tool's call left on disk, as its arguments name them: `filePath`, or for `apply_patch` the
 * added, updated and moved-to files of its patch (deleted files have nothing to diagnose). Empty for other tools.
 */
export const editedPaths = (tool: string, args: Readonly<Record<string, unknown>>): Array<string> => {
  if (!EDIT_TOOLS.has(tool)) return []
  if (tool !== "apply_patch") return typeof args.filePath === "string" && args.filePath !== "" ? [args.filePath] : []
  if (typeof args.patchText !== "string") return []
  const paths: Array<string> = []
  for (const line of args.patchText.split(/\r?\n/)) {
    const match = PATCH_HEADER.exec(line.trim())
    if (!match?.[2]) continue
    // A move replaces the file it follows: the old name no longer exists.
    if (match[1] === "Move to") paths.pop()
    paths.push(match[2].trim())
  }
  return [...new Set(paths)]
}
