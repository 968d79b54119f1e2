import { readFile, stat } from "node:fs/promises"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import type { PromptPart } from "@lathe/plugin/schema"
import { mentionedFiles } from "./mentions.js"

/** Text files attached by @mention are cut at this size. */
const ATTACH_LIMIT = 100_000

/** Files attached as data URLs rather than inlined as text. */
const FILE_MIME: Readonly<Record<string, string>> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  pdf: "application/pdf"
}

/**
 * The parts that attach each `@path` a prompt mentions: a text file inlined (as a synthetic part, cut at
 * {@link ATTACH_LIMIT} characters) beside a file part naming it, an image or PDF as a data URL; a binary file is not
 * attached and comes back as a problem for the person.
 */
export const attachFiles = async (
  text: string,
  root: string,
  /**
   * Whether the session may read `path` (relative to root), as the `read` tool would ask; undefined when it may, else
   * why not. A refused file is neither read nor attached: it comes back as a problem.
   */
  admit: (path: string) => Promise<string | undefined> = async () => undefined
): Promise<{
  readonly parts: ReadonlyArray<PromptPart>
  readonly problems: ReadonlyArray<{ readonly title: string; readonly message: string }>
}> => {
  const parts: Array<PromptPart> = []
  const problems: Array<{ title: string; message: string }> = []
  for (const path of await mentionedFiles(text, root).catch(() => [] as ReadonlyArray<string>)) {
    const refusal = await admit(path)
    if (refusal !== undefined) {
      problems.push({ title: `@${path}`, message: `Not attached: ${refusal}` })
      continue
    }
    const absolute = join(root, path)
    const extension = path.split(".").pop()?.toLowerCase() ?? ""
    const url = pathToFileURL(absolute).href
    const binary = FILE_MIME[extension]
    if (binary) {
      const data = await readFile(absolute)
      parts.push({
        type: "file",
        mime: binary,
        url: `data:${binary};base64,${data.toString("base64")}`,
        filename: path
      })
      continue
    }
    const info = await stat(absolute)
    if (info.isDirectory()) continue
    const buffer = await readFile(absolute)
    if (buffer.subarray(0, 8000).includes(0)) {
      problems.push({
        title: `@${path}`,
        message: "Not attached: it is a binary file. Ask the agent to inspect it instead."
      })
      continue
    }
    const content = buffer.toString("utf8")
    const cut = content.length > ATTACH_LIMIT
    parts.push({ type: "file", mime: "text/plain", url, filename: path })
    parts.push({
      type: "text",
      synthetic: true,
      text: `The user attached ${path}${cut ? ` (first ${ATTACH_LIMIT} characters of ${content.length})` : ""}:\n<file path="${path}">\n${cut ? content.slice(0, ATTACH_LIMIT) : content}\n</file>`
    })
  }
  return { parts, problems }
}
