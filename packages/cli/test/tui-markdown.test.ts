import { describe, expect, it } from "vitest"
import { createStyle } from "../src/style.js"
import { highlightCode } from "../src/tui/highlight.js"
import { renderMarkdown } from "../src/tui/markdown.js"
import { displayWidth } from "../src/wrap.js"

// Any escape at all: the ESC character.
const ESC = new RegExp(String.fromCharCode(27))
const on = createStyle(true)
const off = createStyle(false)
const plain = (text: string, width = 30) => renderMarkdown(text, width, off)
const colored = (text: string, width = 30) => renderMarkdown(text, width, on).join("\n")

const SAMPLE = `# Release notes

Here is a **bold** claim, some *italic*, ~~struck~~ text and \`inline code\` with a [link](https://example.com/a/very/long/path/that/goes/on)
and <https://auto.example>. Wide text: 中文字符 and emoji 🎉🎉 too.

## Steps

1. First do this thing that is described at some length so that it wraps
2. Then that
   - nested bullet with \`code\`
   - [x] done task
   - [ ] open task

> A quote that is long enough to wrap when the terminal is narrow, clearly.
> > Nested quote with **bold**

---

\`\`\`typescript
const answer: number = 42 // the answer, with a comment long enough to need wrapping at narrow widths
export function greet(name: string) { return \`hi \${name}\` }
\`\`\`

    indented code block

| Name | Value | Note |
|:-----|------:|:----:|
| alpha | 1 | first |
| beta | 22 | a longer note |

<div>html stays as text</div>

Escaped \\*stars\\* and &amp; entities.
`

describe("renderMarkdown, colours off (exact lines)", () => {
  it("headings lose their #s", () => {
    expect(plain("# Title\n\n## Sub\n\n#### Deep")).toEqual(["Title", "", "Sub", "", "Deep"])
  })

  it("inline styles show their text; links as text (url), a bare url once; escapes and entities decoded", () => {
    expect(plain("a **b** *c* ~~d~~ `e` [f](http://g) <http://h.com> \\* &amp; <b>x</b>", 60)).toEqual([
      "a b c d e f (http://g) http://h.com * & <b>x</b>"
    ])
  })

  it("paragraphs wrap to the width; soft breaks are spaces, hard breaks new lines", () => {
    expect(plain("one two three four five six seven", 14)).toEqual(["one two three", "four five six", "seven"])
    expect(plain("line one\nline two  \nline three")).toEqual(["line one line two", "line three"])
  })

  it("ordered and nested lists with hanging indents", () => {
    expect(plain("1. one\n2. two that wraps around the narrow width here\n   - nested a\n     - deeper")).toEqual([
      "1. one",
      "2. two that wraps around the",
      "   narrow width here",
      "   ◦ nested a",
      "     ▪ deeper"
    ])
    expect(plain("9. nine\n10. ten")).toEqual([" 9. nine", "10. ten"])
    expect(plain("- a\n\n- b")).toEqual(["• a", "", "• b"])
  })

  it("task lists", () => {
    expect(plain("- [ ] todo\n- [x] done")).toEqual(["[ ] todo", "[x] done"])
  })

  it("blockquotes, nested", () => {
    expect(plain("> quote\n>\n> > nested")).toEqual(["│ quote", "│", "│ │ nested"])
  })

  it("horizontal rules fill the width", () => {
    expect(plain("a\n\n***\n\nb", 12)).toEqual(["a", "", "─".repeat(12), "", "b"])
  })

  it("fenced code: indented, language label, long lines hard-wrapped not truncated", () => {
    expect(plain("```python\ndef f():\n    return 'a very long line that never gets cut'\n```")).toEqual([
      "  python",
      "  def f():",
      "      return 'a very long line",
      "   that never gets cut'"
    ])
  })

  it("indented code", () => {
    expect(plain("text\n\n    indented code\n    more")).toEqual(["text", "", "  indented code", "  more"])
  })

  it("tables: aligned columns when they fit, rows of cells when not", () => {
    expect(plain("| a | b |\n|---|--:|\n| 1 | two |")).toEqual(["a │   b", "──┼────", "1 │ two"])
    expect(plain("| a | b |\n|---|---|\n| a long cell that cannot fit | another long cell |")).toEqual([
      "a · b",
      "a long cell that cannot fit ·",
      "another long cell"
    ])
  })

  it("HTML blocks and images show as text", () => {
    expect(plain("<div>\nhi\n</div>")).toEqual(["<div>", "hi", "</div>"])
    expect(plain("![alt](pic.png)")).toEqual(["[image: alt] (pic.png)"])
  })

  it("no leading or trailing blank lines, one blank line between blocks", () => {
    expect(plain("\n\n\npara one\n\n\n\npara two\n\n\n")).toEqual(["para one", "", "para two"])
    expect(plain("")).toEqual([])
  })

  it("removes escapes and control characters the text itself carries", () => {
    expect(plain("a\x1b[31mred\x1b[0m\x07 b")).toEqual(["ared b"])
  })
})

describe("renderMarkdown, colours on", () => {
  it("styles each construct with its SGR codes", () => {
    expect(colored("# Title")).toBe("\x1b[1m\x1b[4m\x1b[35mTitle\x1b[39m\x1b[24m\x1b[22m")
    expect(colored("## Sub")).toContain("\x1b[1m\x1b[35mSub")
    const inline = colored("**b** *c* ~~d~~ `e` [f](http://g)", 60)
    for (const code of ["\x1b[1mb\x1b[22m", "\x1b[3mc\x1b[23m", "\x1b[9md\x1b[29m", "\x1b[36me\x1b[39m"])
      expect(inline).toContain(code)
    expect(inline).toContain("\x1b[2m(http://g)\x1b[22m")
    expect(colored("- [x] done")).toContain("\x1b[32m[x]\x1b[39m")
    expect(colored("> q")).toBe("\x1b[2m│\x1b[22m q")
    expect(colored("---", 10)).toBe(`\x1b[2m${"─".repeat(10)}\x1b[22m`)
    expect(colored("| a |\n|---|\n| 1 |")).toContain("\x1b[1ma\x1b[22m")
  })

  it("highlights fenced code and dims its language label", () => {
    const out = colored("```ts\nconst x = 'a' // c\n```", 60).split("\n")
    expect(out[0]).toBe("  \x1b[2mts\x1b[22m")
    expect(out[1]).toContain("\x1b[35mconst\x1b[39m")
    expect(out[1]).toContain("\x1b[32m'a'\x1b[39m")
    expect(out[1]).toContain("\x1b[90m// c\x1b[39m")
  })
})

describe("renderMarkdown, widths", () => {
  it("never exceeds the width, from 10 to 120 columns, colours on and off", () => {
    for (let width = 10; width <= 120; width++)
      for (const style of [on, off]) {
        const lines = renderMarkdown(SAMPLE, width, style)
        for (const line of lines) {
          if (displayWidth(line) > width) throw new Error(`width ${width}: ${JSON.stringify(line)}`)
        }
        if (!style.color) expect(lines.join("\n")).not.toMatch(ESC)
      }
  })

  it("clamps widths under 10 to 10", () => {
    const lines = renderMarkdown(SAMPLE, 3, off)
    expect(lines).toEqual(renderMarkdown(SAMPLE, 10, off))
    expect(Math.max(...lines.map(displayWidth))).toBe(10)
  })

  it("keeps every character of a long code line", () => {
    const code = `x${"0123456789".repeat(5)}y`
    const lines = plain(`\`\`\`\n${code}\n\`\`\``, 12)
    expect(lines.map((l) => l.slice(2)).join("")).toBe(code)
  })
})

describe("renderMarkdown, streaming", () => {
  it("renders every prefix of a document without throwing, colours on and off", () => {
    for (let i = 0; i <= SAMPLE.length; i++) {
      expect(() => renderMarkdown(SAMPLE.slice(0, i), 40, on)).not.toThrow()
      expect(renderMarkdown(SAMPLE.slice(0, i), 40, off).join("\n")).not.toMatch(ESC)
    }
  })

  it("an unclosed fence is the code so far; a half-written bold is its text", () => {
    expect(plain("Look:\n\n```ts\nconst x = 1\nconst")).toEqual(["Look:", "", "  ts", "  const x = 1", "  const"])
    expect(plain("```")).toEqual([])
    expect(plain("some **bol")).toEqual(["some **bol"])
  })
})

describe("highlightCode", () => {
  it("returns one line per source line, plain without colour or with an unknown language", () => {
    expect(highlightCode("a\n\tb\n", "ts", off)).toEqual(["a", "    b", ""])
    expect(highlightCode("x = 1\ny", "no-such-lang", on)).toEqual(["x = 1", "y"])
    expect(highlightCode("x = 1", undefined, on)).toEqual(["x = 1"])
  })

  it("styles each line on its own, even inside a multi-line token", () => {
    const lines = highlightCode("/* one\ntwo */\nlet x = 2", "js", on)
    expect(lines).toEqual([
      "\x1b[90m/* one\x1b[39m",
      "\x1b[90mtwo */\x1b[39m",
      expect.stringContaining("\x1b[33m2\x1b[39m")
    ])
  })

  it("takes the first word of a fence info string, in any case", () => {
    expect(highlightCode("fn main() {}", "Rust {title=x}", on)[0]).toContain("\x1b[35mfn\x1b[39m")
  })
})
