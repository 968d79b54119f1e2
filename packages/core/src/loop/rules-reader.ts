import { statSync } from "node:fs"
import { dirname } from "node:path"
import type { Config } from "../config/config.js"
import type { Paths } from "../config/paths.js"
import { isRemoteInstruction, loadRemoteInstruction, type RemoteInstruction } from "../config/remote-instructions.js"
import {
  startupRules as findStartupRules,
  MAX_RULES_FILE_BYTES,
  MAX_RULES_TOTAL_BYTES,
  outsideRealPath,
  readPrefix,
  type StartupRulesFile,
  utf8Prefix
} from "../config/rules-files.js"
import { expandImports } from "../config/rules-imports.js"

/** Something the person is told about the rules files (published by the `SystemPrompt`); the model never reads it. */
export interface RulesNotice {
  readonly level: "info" | "warn"
  readonly message: string
}

/** How the `SystemPrompt` reads rules files: where they are, what an untrusted project may read, their text. */
export interface RulesReader {
  /** The startup rules files of a session, looked up now; the person's own are remembered as readable anywhere. */
  readonly find: () => Promise<Array<StartupRulesFile>>
  /**
   * Each rules file's text, labelled with its path (`scoped`: and the folder it applies to), then the files it
   * imports; at most {@link MAX_RULES_TOTAL_BYTES} of text in all, the file that crosses it cut and those after it
   * left out.
   */
  readonly text: (list: ReadonlyArray<string>, scoped?: boolean) => Array<string>
  /** What to tell the person, in order, not yet published: the `SystemPrompt` takes them out as it publishes them. */
  readonly notices: Array<RulesNotice>
}

/**
 * The rules files' reader for one process (see `SystemPrompt` for the walls and caps it keeps). A rules file is re-read
 * only when its mtime or size changed; each warning is given once.
 */
export const makeRulesReader = (paths: Paths["Service"], config: Config["Service"]): RulesReader => {
  const files = new Map<string, { mtime: number; size: number; text: string }>()
  // The files the person named (their own rules files, their config's outside instructions): read wherever they
  // are, even when the project is the home folder. Filled as each session's startup files are found.
  const personal = new Set<string>()
  // A config built without the field (not by `loadConfig`) gives the untrusted project no benefit of the doubt.
  const untrustedInstructions = config.untrustedInstructions ?? (config.trusted ? [] : config.info.instructions)
  const noticed = new Set<string>()
  const notices: Array<RulesNotice> = []
  /** Says something once (published by `rules`); the person reads it, the model never does. */
  const notice = (message: string) => {
    if (noticed.has(message)) return
    noticed.add(message)
    notices.push({ level: "warn", message })
  }
  // Remote `instructions` (the person's or a trusted config's URLs), fetched or read from their cache as soon as the
  // reader exists, so the fetch overlaps the rest of start-up rather than the first request.
  const remote = new Map<string, Promise<RemoteInstruction>>()
  const remoteText = new Map<string, string | undefined>()
  for (const entry of config.info.instructions)
    if (isRemoteInstruction(entry) && !untrustedInstructions.includes(entry))
      remote.set(entry, loadRemoteInstruction(entry, { dataDir: paths.data }))
  const skip = (file: string, real: string) =>
    notice(
      `Ignored from untrusted ${paths.root}: rules file ${file} (its real path ${real} is outside the ` +
        `project). Run \`lathe trust\` in ${paths.root} to trust this folder.`
    )
  /**
   * Whether a rules file may be read: always in a trusted project and for the files the person named; otherwise
   * only when its real path is inside the project. Synchronous (one `realpath` syscall), as it runs for such
   * files on every step: a file replaced by a symlink mid-session counts.
   */
  const readable = (file: string): boolean => {
    if (config.trusted || personal.has(file)) return true
    const real = outsideRealPath(paths.root, file)
    if (real === undefined) return true
    if (real !== false) skip(file, real)
    return false
  }

  /**
   * A rules file's text, at most {@link MAX_RULES_FILE_BYTES} of it (a cut one ends with a line saying so, and
   * the person gets a notice), re-read only when its mtime or size changed; undefined when it is not a file.
   */
  const readCached = (file: string): string | undefined => {
    // Synchronous on purpose: a `stat` of a local file costs microseconds, a round trip through the thread pool
    // about a hundred, and this runs for every rules file on every step.
    const info = statSync(file, { throwIfNoEntry: false })
    if (!info?.isFile()) return undefined
    const cached = files.get(file)
    if (cached && cached.mtime === info.mtimeMs && cached.size === info.size) return cached.text
    const read = readPrefix(file, MAX_RULES_FILE_BYTES)
    if (read === undefined) return undefined
    let text = read.text.trim()
    if (read.cut) {
      text += `\n[Cut: ${file} is ${info.size} bytes; only its first ${MAX_RULES_FILE_BYTES} bytes are included.]`
      notice(
        `Rules file ${file} is ${info.size} bytes: only its first ${MAX_RULES_FILE_BYTES} (256 KiB, the cap ` +
          "per rules file) are sent to the model. Move what matters to the top, or split it into smaller files."
      )
    }
    files.set(file, { mtime: info.mtimeMs, size: info.size, text })
    return text
  }

  const find = async (): Promise<Array<StartupRulesFile>> => {
    const found = await findStartupRules({
      directory: paths.directory,
      root: paths.root,
      home: paths.home,
      configDir: paths.config,
      instructions: config.info.instructions,
      untrustedInstructions,
      onOutside: (pattern, path) =>
        notice(
          `Ignored from untrusted ${paths.root}: instructions ${JSON.stringify(pattern)} reaches ${path}, ` +
            `outside the project: not searched. Run \`lathe trust\` in ${paths.root} to trust this folder.`
        )
    })
    for (const { file, personal: theirs } of found) if (theirs) personal.add(file)
    for (const { file } of found) {
      const pending = remote.get(file)
      if (pending === undefined || remoteText.has(file)) continue
      const loaded = await pending
      remoteText.set(file, loaded.text)
      for (const message of loaded.notices) notice(message)
    }
    return found
  }

  /**
   * Why an import may not be followed, or undefined when it may: anything goes in a trusted project and from the
   * files the person named; otherwise the import's real path must be inside the project.
   */
  const refuseImport = (file: string, rules: string): string | undefined => {
    if (config.trusted || personal.has(rules)) return undefined
    const real = outsideRealPath(paths.root, file)
    if (real === undefined || real === false) return undefined // inside, or absent (noted as missing)
    return (
      `${real === file ? file : `${file} leads to ${real}, which`} is outside the untrusted project ` +
      `${paths.root}: not followed. Run \`lathe trust\` in ${paths.root} to trust this folder.`
    )
  }
  const importHost = {
    home: paths.home,
    read: readCached,
    refuse: refuseImport,
    notice
  }

  const text = (list: ReadonlyArray<string>, scoped = false): Array<string> => {
    const out: Array<string> = []
    let left = MAX_RULES_TOTAL_BYTES
    const add = (file: string, label: string, text: string) => {
      if (left <= 0) {
        notice(`Rules file ${file} left out: the rules already reach ${MAX_RULES_TOTAL_BYTES} bytes (1 MiB cap).`)
        return
      }
      const bytes = Buffer.byteLength(text)
      let kept = text
      if (bytes > left) {
        kept = `${utf8Prefix(Buffer.from(text), left)}\n[Cut: the rules reach the ${MAX_RULES_TOTAL_BYTES}-byte cap here.]`
        notice(`Rules file ${file} cut: the rules reach ${MAX_RULES_TOTAL_BYTES} bytes (1 MiB cap) within it.`)
      }
      left -= bytes
      out.push(`${label}:\n${kept}`)
    }
    for (const file of list) {
      if (isRemoteInstruction(file)) {
        // Fetched once per process (see `find`); its `@` lines are not followed: a server names no local files.
        const text = remoteText.get(file)
        if (text) add(file, `Instructions from ${file}`, text)
        continue
      }
      const text = readable(file) ? readCached(file) : undefined
      if (!text) continue
      const scope = scoped ? ` (they apply to files under ${dirname(file)})` : ""
      add(file, `Instructions from ${file}${scope}`, text)
      for (const imported of expandImports(file, text, importHost))
        if (imported.text)
          add(imported.file, `Instructions from ${imported.file} (imported by ${imported.from})`, imported.text)
    }
    return out
  }

  return { find, text, notices }
}
