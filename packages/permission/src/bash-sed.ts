/**
 * Reads a sed script far enough to find what runs commands: the `e` command (its text is a shell line) and the
 * `e` flag of `s` (it runs the pattern space, known only at run time). A script it cannot read is unknown.
 */

/** What a sed script runs: shell lines of `e COMMAND`, and whether something runs text known only at run time. */
export interface SedCode {
  readonly lines: ReadonlyArray<string>
  readonly dynamic?: string
}

const SIMPLE = new Set([..."=dDgGhHnNpPxzF{}lLqQ"])

/** Scans `script` as GNU sed reads it. */
export const sedCode = (script: string): SedCode => {
  const lines: Array<string> = []
  let i = 0
  const n = script.length
  const toEol = (): string => {
    let text = ""
    while (i < n && script[i] !== "\n") {
      if (script[i] === "\\" && i + 1 < n) {
        text += script[i + 1]
        i += 2
      } else text += script[i++]
    }
    return text
  }
  const delimited = (delim: string): boolean => {
    // Skips to the closing delimiter (escapes honoured); false when there is none.
    while (i < n && script[i] !== delim) {
      if (script[i] === "\\") i++
      else if (script[i] === "\n" && delim !== "\n") return false
      i++
    }
    if (i >= n) return false
    i++
    return true
  }
  const address = (): boolean => {
    const char = script[i]
    if (char === "/") {
      i++
      if (!delimited("/")) return false
      while (script[i] === "I" || script[i] === "M") i++
    } else if (char === "\\" && i + 1 < n) {
      const delim = script[i + 1] as string
      i += 2
      if (!delimited(delim)) return false
      while (script[i] === "I" || script[i] === "M") i++
    } else if (char === "$") i++
    else if (char !== undefined && /[0-9+~]/.test(char)) while (i < n && /[0-9~+]/.test(script[i] as string)) i++
    return true
  }
  while (i < n) {
    const char = script[i] as string
    if (/[\s;]/.test(char)) {
      i++
      continue
    }
    if (char === "#") {
      toEol()
      continue
    }
    if (!address()) return { lines, dynamic: "sed's script could not be read" }
    while (script[i] === " " || script[i] === "\t") i++
    if (script[i] === ",") {
      i++
      if (!address()) return { lines, dynamic: "sed's script could not be read" }
    }
    while (script[i] === " " || script[i] === "\t" || script[i] === "!") i++
    const command = script[i++]
    if (command === undefined) break
    if (SIMPLE.has(command)) {
      while (i < n && /[0-9]/.test(script[i] as string)) i++
      continue
    }
    if (command === "e") {
      const text = toEol().trim()
      if (text === "") return { lines, dynamic: "sed's e command runs the pattern space as a shell command" }
      lines.push(text)
      continue
    }
    if (":btTvaicrRwW".includes(command)) {
      // Labels end at `;` for b/t/T; text and file names run to the end of the line.
      if ("btT".includes(command)) while (i < n && script[i] !== ";" && script[i] !== "\n" && script[i] !== "}") i++
      else toEol()
      continue
    }
    if (command === "s" || command === "y") {
      const delim = script[i++]
      if (delim === undefined || delim === "\n" || delim === "\\")
        return { lines, dynamic: "sed's script could not be read" }
      if (!delimited(delim) || !delimited(delim)) return { lines, dynamic: "sed's script could not be read" }
      if (command === "y") continue
      while (i < n && /[gpiImMe0-9w]/.test(script[i] as string)) {
        const flag = script[i++]
        if (flag === "e") return { lines, dynamic: "sed's s///e flag runs the pattern space as a shell command" }
        if (flag === "w") {
          toEol()
          break
        }
      }
      continue
    }
    return { lines, dynamic: `sed's script has a command Lathe does not know (${command})` }
  }
  return { lines }
}
