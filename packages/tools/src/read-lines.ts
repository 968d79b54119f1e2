import { open } from "node:fs/promises"

/** Bytes read from the file per call: what the reader holds of the file at once, besides the kept head of a line. */
export const READ_CHUNK_BYTES = 64 * 1024

/** One line of a file as {@link boundedLines} yields it. */
export interface BoundedLine {
  /** The line's first bytes (at most the cap given), without its terminator. */
  readonly head: Buffer
  /** The line had more bytes than the cap; they were read past and dropped. */
  readonly cut: boolean
}

const LF = 0x0a
const CR = 0x0d

/**
 * The lines of the file at `path`, split as readline splits them (`\n`, `\r\n` or `\r`; no empty line after a final
 * terminator), read by bytes: at most `maxLineBytes` of each line are kept and the rest is skipped as it streams
 * past, so memory stays at one chunk plus one capped line whatever the length of a line (a 300 MB file of one line
 * costs no more than a short one). The file is closed when the caller stops early.
 */
export async function* boundedLines(path: string, maxLineBytes: number): AsyncGenerator<BoundedLine> {
  const handle = await open(path, "r")
  try {
    const chunk = Buffer.allocUnsafe(READ_CHUNK_BYTES)
    let parts: Array<Buffer> = []
    let kept = 0
    let cut = false
    let started = false
    // A `\r` ended the previous chunk: a `\n` opening the next one belongs to the same terminator.
    let afterCR = false
    const keep = (bytes: Buffer) => {
      started = true
      const room = maxLineBytes - kept
      if (bytes.length > room) cut = true
      if (room <= 0 || bytes.length === 0) return
      const taken = Buffer.from(bytes.subarray(0, room)) // a copy: `chunk` is reused by the next read
      parts.push(taken)
      kept += taken.length
    }
    const finish = (): BoundedLine => {
      const line = { head: parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts), cut }
      parts = []
      kept = 0
      cut = false
      started = false
      return line
    }
    for (;;) {
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null)
      if (bytesRead === 0) break
      const view = chunk.subarray(0, bytesRead)
      let at = afterCR && view[0] === LF ? 1 : 0
      afterCR = false
      // The next `\n` and `\r` at or after `at`, each searched for again only once passed (one scan per chunk).
      let lf = -2
      let cr = -2
      while (at < view.length) {
        if (lf !== -1 && lf < at) lf = view.indexOf(LF, at)
        if (cr !== -1 && cr < at) cr = view.indexOf(CR, at)
        const stop = Math.min(lf < 0 ? view.length : lf, cr < 0 ? view.length : cr)
        keep(view.subarray(at, stop))
        if (stop === view.length) break
        yield finish()
        at = stop + 1
        if (stop === cr) {
          if (at < view.length && view[at] === LF) at++
          else if (at === view.length) afterCR = true
        }
      }
    }
    if (started) yield finish()
  } finally {
    await handle.close()
  }
}
