/** The turn list of a session, as `lathe undo --list` and `/undo --list` print it. */
import type { SessionTurn } from "@lathe/core"

/** `n word` or `n words`. */
export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

const when = (ms: number) => {
  const d = new Date(ms)
  const two = (n: number) => String(n).padStart(2, "0")
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}`
}

const oneLine = (text: string, max = 60) => {
  const line = text.split("\n")[0]?.trim() ?? ""
  return line.length > max ? `${line.slice(0, max - 1)}…` : line
}

/** `lathe undo --list` (and `/undo --list`, with `command` "/"): one line per turn. */
export const turnLines = (
  sessionID: string,
  turns: ReadonlyArray<SessionTurn>,
  command: "lathe " | "/" = "lathe "
): Array<string> =>
  turns.length === 0
    ? [`Session ${sessionID} has no turns yet.`]
    : [
        `Turns of session ${sessionID}, oldest first:`,
        ...turns.map((turn) => {
          const files =
            turn.files.length === 0
              ? "no files changed"
              : `${plural(turn.files.length, "file")}: ${turn.files.slice(0, 5).join(", ")}${turn.files.length > 5 ? ", …" : ""}`
          return `  ${String(turn.index).padStart(3)}  ${when(turn.time)}  "${oneLine(turn.prompt)}"  ${files}${turn.undone ? "  (undone)" : ""}`
        }),
        `\`${command}undo\` undoes the last turn, \`${command}undo <n>\` goes back to before turn n, ` +
          `\`${command}redo\` brings undone turns back.`
      ]
