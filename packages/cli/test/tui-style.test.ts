import { describe, expect, it } from "vitest"
import { colorEnabled, createStyle, stripAnsi } from "../src/style.js"
import { displayWidth, hardWrap, truncate, wrapText } from "../src/wrap.js"

// Any escape at all: the ESC character.
const ESC = new RegExp(String.fromCharCode(27))
const on = createStyle(true)
const off = createStyle(false)

describe("createStyle", () => {
  it("emits SGR pairs with colour on and nothing at all with colour off", () => {
    expect(on.bold("a")).toBe("\x1b[1ma\x1b[22m")
    expect(on.red("a")).toBe("\x1b[31ma\x1b[39m")
    expect(on.gray("a")).toBe("\x1b[90ma\x1b[39m")
    expect(on.strike("a")).toBe("\x1b[9ma\x1b[29m")
    const names = ["bold", "dim", "italic", "underline", "inverse", "strike", "red", "green", "yellow", "blue"] as const
    for (const name of [...names, "magenta", "cyan", "gray"] as const) {
      expect(on[name]("x")).toMatch(ESC)
      expect(off[name]("x")).toBe("x")
    }
    expect(on.color).toBe(true)
    expect(off.color).toBe(false)
  })

  it("re-opens an outer style after an inner one that shares its close code", () => {
    expect(on.dim(`${on.bold("a")}b`)).toBe("\x1b[2m\x1b[1ma\x1b[22m\x1b[2mb\x1b[22m")
    expect(on.green(`${on.red("a")}b`)).toBe("\x1b[32m\x1b[31ma\x1b[39m\x1b[32mb\x1b[39m")
  })
})

describe("colorEnabled", () => {
  it("follows the TTY when nothing is set", () => {
    expect(colorEnabled({}, true)).toBe(true)
    expect(colorEnabled({}, false)).toBe(false)
  })
  it("is off with NO_COLOR set and non-empty, and ignores an empty NO_COLOR", () => {
    expect(colorEnabled({ NO_COLOR: "1" }, true)).toBe(false)
    expect(colorEnabled({ NO_COLOR: "" }, true)).toBe(true)
  })
  it("is off with TERM=dumb", () => {
    expect(colorEnabled({ TERM: "dumb" }, true)).toBe(false)
    expect(colorEnabled({ TERM: "xterm-256color" }, true)).toBe(true)
  })
  it("FORCE_COLOR=1/2/3 forces colour on, FORCE_COLOR=0 forces it off", () => {
    for (const level of ["1", "2", "3"]) {
      expect(colorEnabled({ FORCE_COLOR: level }, false)).toBe(true)
      expect(colorEnabled({ FORCE_COLOR: level, NO_COLOR: "1", TERM: "dumb" }, false)).toBe(true)
    }
    expect(colorEnabled({ FORCE_COLOR: "0" }, true)).toBe(false)
  })
})

describe("stripAnsi and displayWidth", () => {
  it("removes SGR, other CSI and OSC hyperlink escapes", () => {
    expect(stripAnsi(`${on.bold("a")}\x1b[2Kb\x1b]8;;https://x\x07c\x1b]8;;\x07`)).toBe("abc")
  })
  it("ignores escapes and counts CJK and emoji as 2 columns", () => {
    expect(displayWidth(on.red("abc"))).toBe(3)
    expect(displayWidth("中文")).toBe(4)
    expect(displayWidth("🎉a")).toBe(3)
    expect(displayWidth(on.bold("中"))).toBe(2)
    expect(displayWidth("cafe\u0301 1\ufe0f\u20e3")).toBe(7)
    expect(displayWidth("👩‍👩‍👧 ok")).toBe(5)
  })
})

describe("wrapText", () => {
  it("wraps on words, drops the spaces at the break and keeps leading indentation", () => {
    expect(wrapText("the quick brown fox jumps", 10)).toEqual(["the quick", "brown fox", "jumps"])
    expect(wrapText("  indented words here", 12)).toEqual(["  indented", "words here"])
    expect(wrapText("a\nb", 10)).toEqual(["a", "b"])
  })
  it("cuts a word longer than the width", () => {
    expect(wrapText("abcdefghijklmno", 10)).toEqual(["abcdefghij", "klmno"])
    expect(wrapText("ab abcdefghijklmno", 10)).toEqual(["ab abcdefg", "hijklmno"])
  })
  it("counts wide characters as 2 columns", () => {
    const lines = wrapText("中文中文中文中文中文中文", 10)
    expect(lines).toEqual(["中文中文中", "文中文中文", "中文"])
  })
  it("closes styles at the end of a line and re-opens them on the next", () => {
    const lines = wrapText(`x ${on.bold("one two three")} y`, 8)
    expect(lines).toEqual(["x \x1b[1mone\x1b[22m", "\x1b[1mtwo\x1b[22m", "\x1b[1mthree\x1b[22m y"])
    for (const line of lines) expect(displayWidth(line)).toBeLessThanOrEqual(8)
  })
  it("hardWrap keeps every character, spaces included", () => {
    expect(hardWrap("  a b c d e f", 5)).toEqual(["  a b", " c d ", "e f"])
    expect(hardWrap(on.green("abcdefg"), 4)).toEqual(["\x1b[32mabcd\x1b[39m", "\x1b[32mefg\x1b[39m"])
  })
})

describe("truncate", () => {
  it("keeps what fits and cuts the rest with an ellipsis, closing open styles", () => {
    expect(truncate("hello", 5)).toBe("hello")
    expect(truncate("hello world", 8)).toBe("hello w…")
    expect(truncate("中文中文", 5)).toBe("中文…")
    expect(truncate(on.red("hello world"), 6)).toBe("\x1b[31mhello…\x1b[39m")
    expect(displayWidth(truncate("🎉🎉🎉", 4))).toBeLessThanOrEqual(4)
  })
})
