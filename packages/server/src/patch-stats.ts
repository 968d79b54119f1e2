import type { FileChange } from "@lathe/sdk"

const unquote = (path: string): string => (path.startsWith('"') && path.endsWith('"') ? JSON.parse(path) : path)

/**
 * The files of a `git diff` patch with their status and line counts, read from the text alone (a server in front of
 * a cluster has no checkout to ask git). Binary files count 0/0. Renames do not occur: workspace patches record a
 * rename as a delete and an add.
 */
export const patchFiles = (patch: string): Array<FileChange> => {
  const files: Array<FileChange> = []
  let current: { file: string; status: FileChange["status"]; additions: number; deletions: number } | undefined
  let inHunk = false
  for (const line of patch.split("\n")) {
    if (line.startsWith("diff --git ")) {
      if (current) files.push(current)
      const match = /^diff --git (?:"a\/(.+)"|a\/(\S+)) /.exec(line)
      current = { file: unquote(match?.[1] ?? match?.[2] ?? ""), status: "modified", additions: 0, deletions: 0 }
      inHunk = false
      continue
    }
    if (!current) continue
    if (!inHunk) {
      if (line.startsWith("new file mode")) current.status = "added"
      else if (line.startsWith("deleted file mode")) current.status = "deleted"
      else if (line.startsWith("@@")) inHunk = true
      continue
    }
    if (line.startsWith("+")) current.additions++
    else if (line.startsWith("-")) current.deletions++
  }
  if (current) files.push(current)
  return files
}
