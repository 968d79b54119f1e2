/**
 * The one sanitiser of what Lathe writes to a terminal. Text from outside Lathe (a model's answer, tool output, a
 * repository's config, a folder name, an MCP server's stderr, a stored session) may carry escape sequences that move
 * the cursor, hide text (`ESC [8m`), set the window title, write the clipboard (OSC 52) or draw links (OSC 8), and
 * control characters that overwrite a line (`\r`, backspace) or reorder it (bidi overrides). Three views of it:
 * {@link plainText} removes them (data, before Lathe styles it), {@link visibleText} shows them (what a person
 * approves), {@link terminalDoor} lets through only the few sequences Lathe itself writes (the last check at stdout
 * and stderr). Each is one regular-expression pass. Stored data is never changed: only what is written.
 */

// One match is one escape sequence or one control character, longest first:
//   CSI (7-bit `ESC [` or 8-bit 0x9b) with its parameters, intermediates and final byte;
//   a control string (OSC `ESC ]`/0x9d, DCS `ESC P`/0x90, SOS `ESC X`/0x98, PM `ESC ^`/0x9e, APC `ESC _`/0x9f) up to
//     its terminator (BEL, `ESC \` or ST 0x9c), or to the end of the text when it has none (a terminal would
//     swallow the rest);
//   any other escape (`ESC` with intermediates and a final byte: `ESC c`, `ESC #8`, `ESC (0`), or a bare ESC;
//   a C0 control other than tab and newline, DEL, a C1 control;
//   a bidi embedding, override or isolate (U+202A–U+202E, U+2066–U+2069).
const SEQUENCE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  /(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?|(?:\x1b[\]PX^_]|[\x90\x98\x9d-\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?|\x1b[ -/]*[0-~]?|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g

/** Whether `s` holds anything {@link SEQUENCE} matches: most text does not, and is returned as it is. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const ANY = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/

/**
 * `s` with every escape sequence and control character removed, tab and newline kept: safe to style and print. Use
 * it on data before adding Lathe's own colours.
 */
export const plainText = (s: string): string => (ANY.test(s) ? s.replace(SEQUENCE, "") : s)

/** The visible form of one control character: a control picture (`␛`, `␍`, `␇`) for C0 and DEL, `<U+XXXX>` else. */
const picture = (c: string): string => {
  const code = c.charCodeAt(0)
  if (code < 0x20) return String.fromCharCode(0x2400 + code)
  if (code === 0x7f) return "␡"
  return `<U+${code.toString(16).toUpperCase().padStart(4, "0")}>`
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g

/**
 * `s` with every control character shown instead of obeyed (`ESC [8m` as `␛[8m`, a carriage return as `␍`, U+202E
 * as `<U+202E>`), tab and newline kept: what a person reads is exactly what the text holds. For what a person
 * approves (a command, a path, a rule's pattern in a permission ask).
 */
export const visibleText = (s: string): string => (ANY.test(s) ? s.replace(CONTROL, picture) : s)

/** The SGR codes Lathe's styles use (see `style.ts`); never conceal (8), nor colours it does not use. */
const CODE = "(?:0|1|2|3|4|7|9|22|23|24|27|29|3[1-69]|90)"

/** What Lathe itself writes: SGR styling with its own codes, erase-in-line (the live line). */
const OWN = new RegExp(`^\\x1b\\[(?:(?:${CODE}(?:;${CODE})*)?m|[02]?K)$`)

/**
 * The last check before stdout or stderr: removes every escape sequence and control character except Lathe's own
 * (SGR colours, erase-in-line, tab, newline, and a carriage return that starts the write, as the live line's redraw
 * does). It cannot tell data from Lathe's styling, so data must still pass {@link plainText} before it is styled;
 * this stops what was missed from setting the clipboard, the title or a link, or moving the cursor.
 */
export const terminalDoor = (s: string): string => {
  if (!ANY.test(s)) return s
  const start = s.startsWith("\r") ? "\r" : ""
  return start + s.slice(start.length).replace(SEQUENCE, (m) => (OWN.test(m) ? m : ""))
}
