import { assert, describe, it } from "vitest"
import {
  backspace,
  deleteForward,
  deleteToLineEnd,
  deleteToLineStart,
  deleteWordBackward,
  down,
  type EditorState,
  editorFrom,
  emptyEditor,
  end,
  home,
  insert,
  layout,
  left,
  newline,
  paste,
  right,
  submitText,
  up,
  wordLeft,
  wordRight
} from "../src/tui/editor.js"

/** A state from text with "|" marking the cursor. */
const at = (marked: string): EditorState => {
  const cursor = marked.indexOf("|")
  return { text: marked.replace("|", ""), cursor, pastes: [] }
}
/** The state's text with "|" at the cursor. */
const show = (s: EditorState | "edge"): string =>
  s === "edge" ? "edge" : `${s.text.slice(0, s.cursor)}|${s.text.slice(s.cursor)}`
const repeat = (s: EditorState, times: number, step: (s: EditorState) => EditorState): EditorState =>
  Array.from({ length: times }).reduce<EditorState>((acc) => step(acc), s)

describe("editing", () => {
  it("inserts at the cursor, breaks lines and normalises line endings", () => {
    assert.strictEqual(show(insert(at("ab|cd"), "XY")), "abXY|cd")
    assert.strictEqual(show(newline(at("ab|cd"))), "ab\n|cd")
    assert.strictEqual(show(insert(emptyEditor, "a\r\nb\rc")), "a\nb\nc|")
    assert.strictEqual(show(editorFrom("x\r\ny")), "x\ny|")
  })

  it("deletes one character either side, and nothing at the edges", () => {
    assert.strictEqual(show(backspace(at("ab|c"))), "a|c")
    assert.strictEqual(show(deleteForward(at("ab|c"))), "ab|")
    assert.strictEqual(show(backspace(at("|abc"))), "|abc")
    assert.strictEqual(show(deleteForward(at("abc|"))), "abc|")
    assert.strictEqual(show(backspace(at("a\n|b"))), "a|b")
  })

  it("treats a surrogate pair and an emoji sequence as one character", () => {
    assert.strictEqual(show(left(at("a😀|"))), "a|😀")
    assert.strictEqual(show(right(at("a|😀b"))), "a😀|b")
    assert.strictEqual(show(backspace(at("a😀|"))), "a|")
    assert.strictEqual(show(deleteForward(at("|😀b"))), "|b")
    // Thumbs up with a skin tone is two code points, four UTF-16 units: one grapheme.
    assert.strictEqual(show(backspace(at("x👍🏽|"))), "x|")
    assert.strictEqual(show(left(at("x👍🏽|"))), "x|👍🏽")
    assert.strictEqual(left(at("x👍🏽|")).cursor, 1)
  })

  it("moves left and right across line breaks and stops at the ends", () => {
    assert.strictEqual(show(left(at("a\n|b"))), "a|\nb")
    assert.strictEqual(show(right(at("a|\nb"))), "a\n|b")
    assert.strictEqual(show(left(at("|ab"))), "|ab")
    assert.strictEqual(show(right(at("ab|"))), "ab|")
  })

  it("goes home and end within the cursor's line", () => {
    assert.strictEqual(show(home(at("one\ntw|o\nthree"))), "one\n|two\nthree")
    assert.strictEqual(show(end(at("one\nt|wo\nthree"))), "one\ntwo|\nthree")
    assert.strictEqual(show(home(at("|x"))), "|x")
  })

  it("moves by words", () => {
    assert.strictEqual(show(wordLeft(at("foo bar.baz|"))), "foo bar.|baz")
    assert.strictEqual(show(wordLeft(at("foo bar|"))), "foo |bar")
    assert.strictEqual(show(wordLeft(at("foo   |"))), "|foo   ")
    assert.strictEqual(show(wordRight(at("|foo bar"))), "foo| bar")
    assert.strictEqual(show(wordRight(at("foo| bar"))), "foo bar|")
    assert.strictEqual(show(wordLeft(at("one\n|two"))), "|one\ntwo")
    assert.strictEqual(show(wordLeft(at("héllo wörld|"))), "héllo |wörld")
  })

  it("deletes a word back, to the line start and to the line end", () => {
    assert.strictEqual(show(deleteWordBackward(at("git commit -m|"))), "git commit -|")
    assert.strictEqual(show(deleteWordBackward(at("git commit |"))), "git |")
    assert.strictEqual(show(deleteToLineStart(at("a\nbc|d"))), "a\n|d")
    assert.strictEqual(show(deleteToLineStart(at("a\n|d"))), "a|d")
    assert.strictEqual(show(deleteToLineEnd(at("a|bc\nd"))), "a|\nd")
    assert.strictEqual(show(deleteToLineEnd(at("abc|\nd"))), "abc|d")
    assert.strictEqual(show(deleteToLineEnd(at("abc|"))), "abc|")
  })
})

describe("up and down", () => {
  it("keeps the column between lines and clamps to a shorter line", () => {
    assert.strictEqual(show(up(at("abcdef\nab|cd"))), "ab|cdef\nabcd")
    assert.strictEqual(show(down(at("abc|def\nabcdefg"))), "abcdef\nabc|defg")
    assert.strictEqual(show(up(at("ab\nabcde|f"))), "ab|\nabcdef")
    assert.strictEqual(show(down(at("x\nabcd|\nab\ny"))), "x\nabcd\nab|\ny")
  })

  it("keeps the display column across wide characters", () => {
    // "漢字" is four columns wide: column 4 on the next line is after "abcd".
    assert.strictEqual(show(down(at("漢字|\nabcdef"))), "漢字\nabcd|ef")
    assert.strictEqual(show(up(at("😀😀\nab|"))), "😀|😀\nab")
  })

  it('answers "edge" on the first and the last line', () => {
    assert.strictEqual(up(at("ab|c\ndef")), "edge")
    assert.strictEqual(down(at("abc\nd|ef")), "edge")
    assert.strictEqual(up(at("|")), "edge")
    assert.strictEqual(down(emptyEditor), "edge")
  })
})

const longPaste = Array.from({ length: 8 }, (_, i) => `line ${i + 1}`).join("\r\n")

describe("pastes", () => {
  it("inserts a short paste as is, normalising line endings", () => {
    const s = paste(at("a|b"), "x\r\ny\rz")
    assert.strictEqual(show(s), "ax\ny\nz|b")
    assert.deepStrictEqual(s.pastes, [])
  })

  it("replaces a long paste with a numbered marker that submitText expands", () => {
    const first = paste(editorFrom("see "), longPaste)
    assert.strictEqual(show(first), "see [Pasted text #1 +8 lines]|")
    const second = paste(insert(first, " and "), "x".repeat(1_001))
    assert.strictEqual(second.text, "see [Pasted text #1 +8 lines] and [Pasted text #2 +1 lines]")
    assert.strictEqual(
      submitText(insert(second, "!")),
      `see ${longPaste.replaceAll("\r\n", "\n")} and ${"x".repeat(1_001)}!`
    )
  })

  it("keeps a paste of exactly 5 lines and 1,000 characters inline", () => {
    assert.deepStrictEqual(paste(emptyEditor, "1\n2\n3\n4\n5\n").pastes, [])
    assert.deepStrictEqual(paste(emptyEditor, "y".repeat(1_000)).pastes, [])
    assert.strictEqual(paste(emptyEditor, "1\n2\n3\n4\n5\n6").pastes.length, 1)
  })

  it("removes the whole marker and its paste on backspace from inside or after it", () => {
    const s = insert(paste(editorFrom("a "), longPaste), " z")
    const afterMarker = repeat(s, 2, left)
    const gone = backspace(afterMarker)
    assert.strictEqual(show(gone), "a | z")
    assert.deepStrictEqual(gone.pastes, [])
    assert.strictEqual(submitText(gone), "a  z")
    // The cursor steps over a marker as one unit, so it is never left inside one.
    const before = left(afterMarker)
    assert.strictEqual(show(before), "a |[Pasted text #1 +8 lines] z")
    assert.strictEqual(show(right(before)), show(afterMarker))
    assert.strictEqual(show(deleteForward(before)), "a | z")
  })

  it("removes a marker that a word or line deletion cuts into", () => {
    const s = paste(editorFrom("ask "), longPaste)
    assert.strictEqual(show(deleteWordBackward(s)), "ask |")
    assert.deepStrictEqual(deleteWordBackward(s).pastes, [])
    assert.strictEqual(deleteToLineStart(s).text, "")
  })

  it("numbers a new paste after the highest marker still present", () => {
    const two = paste(paste(emptyEditor, longPaste), longPaste)
    const withoutFirst = backspace(repeat(two, 1, wordLeft))
    assert.strictEqual(withoutFirst.text, "[Pasted text #2 +8 lines]")
    assert.strictEqual(paste(end(withoutFirst), longPaste).text, "[Pasted text #2 +8 lines][Pasted text #3 +8 lines]")
  })
})

describe("layout", () => {
  it("wraps long lines and places the cursor in the wrapped rows", () => {
    const s = at("abcdefgh|ij\nxy")
    assert.deepStrictEqual(layout(s, 4), { lines: ["abcd", "efgh", "ij", "xy"], row: 2, col: 0 })
    assert.deepStrictEqual(layout(at("abc\nx|y"), 10), { lines: ["abc", "xy"], row: 1, col: 1 })
    assert.deepStrictEqual(layout(emptyEditor, 10), { lines: [""], row: 0, col: 0 })
  })

  it("never splits a wide character and counts its columns", () => {
    const s = at("a漢字b|")
    assert.deepStrictEqual(layout(s, 4), { lines: ["a漢", "字b"], row: 1, col: 3 })
    assert.deepStrictEqual(layout(at("😀|x"), 10), { lines: ["😀x"], row: 0, col: 2 })
  })

  it("puts a cursor after a full row at the start of a new row", () => {
    assert.deepStrictEqual(layout(at("abcd|"), 4), { lines: ["abcd", ""], row: 1, col: 0 })
    assert.deepStrictEqual(layout(at("ab|cd"), 4), { lines: ["abcd"], row: 0, col: 2 })
  })
})
