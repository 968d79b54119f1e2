import { describe, expect, it } from "@effect/vitest"
import { applyEdit } from "../src/edit-apply.js"
import { findMatches } from "../src/edit-match.js"
import { formatText, parseText } from "../src/text-file.js"

interface Case {
  readonly name: string
  readonly file: string
  readonly old: string
  readonly new: string
  readonly replaceAll?: boolean
  /** The whole file after the edit, or the error the model sees. */
  readonly expected: string | { readonly error: string | RegExp }
  /** The matcher that must have found it. */
  readonly matcher?: string
}

/** Runs one edit the way the edit tool does: parse the file's format, match on LF text, write the format back. */
const edit = (c: Case): { readonly text: string; readonly matcher: string } => {
  const format = parseText(c.file)
  const applied = applyEdit(format.text, { oldString: c.old, newString: c.new, replaceAll: c.replaceAll }, "f.ts")
  return { text: formatText(format, applied.text), matcher: applied.matcher }
}

const twoFunctions = "function a() {\n  const x = 1\n  return x\n}\n\nfunction b() {\n  const y = 2\n  return y\n}\n"

const cases: ReadonlyArray<Case> = [
  // exact
  { name: "exact single line", file: "a\nb\nc\n", old: "b", new: "B", expected: "a\nB\nc\n", matcher: "exact" },
  { name: "exact multi-line", file: "a\nb\nc\n", old: "a\nb", new: "x\ny", expected: "x\ny\nc\n", matcher: "exact" },
  {
    name: "exact match twice is ambiguous, with the lines",
    file: "x = 1\ny = 2\nx = 1\n",
    old: "x = 1",
    new: "x = 3",
    expected: {
      error:
        "Found 2 matches for oldString in f.ts (lines 1, 3; exact match). Include more surrounding lines in " +
        "oldString so that it matches one place only, or set replaceAll to change every match."
    }
  },
  {
    name: "replaceAll renames every exact match",
    file: "foo(foo)\nfoo\n",
    old: "foo",
    new: "bar",
    replaceAll: true,
    expected: "bar(bar)\nbar\n"
  },
  {
    name: "exact wins over a looser look-alike",
    file: "a = 1\na  =  1\n",
    old: "a  =  1",
    new: "a = 2",
    expected: "a = 1\na = 2\n",
    matcher: "exact"
  },
  {
    name: "never edits the tolerant look-alike when an exact match exists",
    file: "if (a) {\n  run()\n}\nif (a) {\n    run()\n}\n",
    old: "if (a) {\n  run()\n}",
    new: "if (a) {\n  stop()\n}",
    expected: "if (a) {\n  stop()\n}\nif (a) {\n    run()\n}\n",
    matcher: "exact"
  },
  {
    name: "exact unicode (CJK and emoji)",
    file: "名前 = '🚀'\n",
    old: "'🚀'",
    new: "'✨'",
    expected: "名前 = '✨'\n",
    matcher: "exact"
  },
  {
    name: "exact with tabs",
    file: "\tif (x) {\n\t\ty()\n\t}\n",
    old: "\t\ty()",
    new: "\t\tz()",
    expected: "\tif (x) {\n\t\tz()\n\t}\n"
  },
  {
    name: "a literal \\n in the file matches exactly, not unescaped",
    file: 'log("a\\nb")\n',
    old: 'log("a\\nb")',
    new: 'log("c")',
    expected: 'log("c")\n',
    matcher: "exact"
  },
  // trimmed boundary
  {
    name: "blank lines around oldString are ignored",
    file: "x\nfoo()\ny\n",
    old: "\n\nfoo()\n\n",
    new: "\n\nbar()\n\n",
    expected: "x\nbar()\ny\n",
    matcher: "trimmed-boundary"
  },
  {
    name: "trailing spaces after oldString are ignored",
    file: "foo()\n",
    old: "foo()  ",
    new: "bar()",
    expected: "bar()\n"
  },
  // indentation-flexible
  {
    name: "a block written without indentation is found and re-indented",
    file: "class A {\n    run() {\n        go()\n    }\n}\n",
    old: "run() {\n    go()\n}",
    new: "run() {\n    go()\n    stop()\n}",
    expected: "class A {\n    run() {\n        go()\n        stop()\n    }\n}\n",
    matcher: "indentation-flexible"
  },
  {
    name: "deeper new lines keep their extra indentation",
    file: "        if (a) {\n            b()\n        }\n",
    old: "    if (a) {\n        b()\n    }",
    new: "    if (a) {\n        b()\n          c()\n    }",
    expected: "        if (a) {\n            b()\n              c()\n        }\n",
    matcher: "indentation-flexible"
  },
  {
    name: "same block at two indentations is ambiguous",
    file: "  x()\n  y()\n\n    x()\n    y()\n",
    old: "x()\ny()",
    new: "z()",
    expected: { error: /^Found 2 matches for oldString in f\.ts \(lines 1, 4; indentation-flexible match\)/ }
  },
  // line-trimmed, tabs vs spaces
  {
    name: "spaces in oldString match a tab-indented file; new text gets tabs",
    file: "function f() {\n\tif (x) {\n\t\treturn 1\n\t}\n}\n",
    old: "  if (x) {\n    return 1\n  }",
    new: "  if (x) {\n    return 2\n  }",
    expected: "function f() {\n\tif (x) {\n\t\treturn 2\n\t}\n}\n",
    matcher: "line-trimmed"
  },
  {
    name: "tabs in oldString match a space-indented file",
    file: "def f():\n    if x:\n        return 1\n",
    old: "\tif x:\n\t\treturn 1",
    new: "\tif x:\n\t\treturn 2",
    expected: "def f():\n    if x:\n        return 2\n",
    matcher: "line-trimmed"
  },
  {
    name: "trailing whitespace in the file is tolerated",
    file: "foo();   \nbar();\n",
    old: "foo();\nbar();",
    new: "baz();",
    expected: "baz();\n",
    matcher: "indentation-flexible"
  },
  {
    name: "deleting whole lines takes their newline",
    file: "a\n  b  \nc\n",
    old: "b\n",
    new: "",
    expected: "a\nc\n"
  },
  {
    name: "replaceAll over tolerant matches",
    file: "  x = 1 \n  x = 1  \n",
    old: "x = 1\n",
    new: "x = 2\n",
    replaceAll: true,
    expected: "  x = 2\n  x = 2\n"
  },
  // whitespace / unicode normalised
  {
    name: "collapsed inner whitespace (whole line)",
    file: "const  x =   1;\n",
    old: "const x = 1;",
    new: "const x = 2;",
    expected: "const x = 2;\n",
    matcher: "whitespace-normalised"
  },
  {
    name: "collapsed whitespace inside a line",
    file: "y = call(a,   b) + 2\n",
    old: "call(a, b)",
    new: "call(b, a)",
    expected: "y = call(b, a) + 2\n",
    matcher: "whitespace-normalised"
  },
  {
    name: "regex characters in an inline match are literal",
    file: "r = a.b(c)  +  d[0]\n",
    old: "a.b(c) + d[0]",
    new: "e",
    expected: "r = e\n"
  },
  {
    name: "curly quotes in the file match straight quotes",
    file: "say(\u201chi\u201d)\n",
    old: 'say("hi")',
    new: 'say("bye")',
    expected: 'say("bye")\n',
    matcher: "whitespace-normalised"
  },
  {
    name: "NFD oldString matches NFC file text",
    file: "name = caf\u00e9\n",
    old: "name = cafe\u0301",
    new: "name = tea",
    expected: "name = tea\n",
    matcher: "whitespace-normalised"
  },
  {
    name: "appears once only after normalisation",
    file: "x  =  1\nx  =  2\n",
    old: "x = 2",
    new: "x = 3",
    expected: "x  =  1\nx = 3\n",
    matcher: "whitespace-normalised"
  },
  {
    name: "normalised twice is ambiguous",
    file: "x  = 1\nx =  1\n",
    old: "x = 1",
    new: "x = 2",
    expected: { error: /^Found 2 matches .*whitespace-normalised match/ }
  },
  // escape-normalised
  {
    name: "literal \\n in oldString means a newline",
    file: "a\nb\n",
    old: "a\\nb",
    new: "a\\nc",
    expected: "a\nc\n",
    matcher: "escape-normalised/exact"
  },
  {
    name: "escaped quotes in oldString",
    file: 'say("hi")\n',
    old: 'say(\\"hi\\")',
    new: 'say(\\"yo\\")',
    expected: 'say("yo")\n',
    matcher: "escape-normalised/exact"
  },
  // block anchors
  {
    name: "block anchor tolerates a slightly wrong middle line",
    file: "function a() {\n  const total = price * count\n  log(total)\n  return total\n}\n",
    old: "function a() {\n  const total = price * count\n  log(totals)\n  return total\n}",
    new: "function a() {\n  return 0\n}",
    expected: "function a() {\n  return 0\n}\n",
    matcher: "block-anchor"
  },
  {
    name: "block anchor refuses a middle that is too different",
    file: "function a() {\n  const x = 1\n  return x\n}\n",
    old: "function a() {\n  fetchEverything(url, options)\n  return response.json()\n}",
    new: "function a() {}",
    expected: { error: /^Could not find oldString in f\.ts\./ }
  },
  {
    name: "block anchor never picks one of two similar blocks (the wrong } bug)",
    file: "if (ok) {\n  send(a, 1)\n  done()\n}\nif (ok) {\n  send(a, 2)\n  done()\n}\n",
    old: "if (ok) {\n  send(a, 3)\n  done()\n}",
    new: "if (ok) {\n  skip()\n}",
    expected: { error: /^Found 2 matches for oldString in f\.ts \(lines 1, 5; block-anchor match\)/ }
  },
  {
    name: "a generic closing line never anchors an edit elsewhere",
    file: twoFunctions,
    old: "function c() {\n  const z = 3\n  return z\n}",
    new: "",
    expected: { error: /^Could not find oldString in f\.ts\./ }
  },
  // line endings, BOM, final newline
  {
    name: "CRLF file, LF oldString; CRLF kept",
    file: "a\r\nb\r\nc\r\n",
    old: "a\nb",
    new: "x\ny",
    expected: "x\r\ny\r\nc\r\n"
  },
  {
    name: "CRLF file, CRLF oldString",
    file: "a\r\nb\r\n",
    old: "b\r\n",
    new: "c\r\nd\r\n",
    expected: "a\r\nc\r\nd\r\n"
  },
  { name: "LF file, CRLF oldString", file: "a\nb\n", old: "a\r\nb", new: "z", expected: "z\n" },
  { name: "BOM is kept", file: "\uFEFFa\nb\n", old: "a", new: "c", expected: "\uFEFFc\nb\n" },
  { name: "a missing final newline stays missing", file: "a\nb", old: "b", new: "c", expected: "a\nc" },
  {
    name: "CRLF with a tolerant match",
    file: "  foo()  \r\n  bar()\r\n",
    old: "foo()\nbar()",
    new: "baz()\nqux()",
    expected: "  baz()\r\n  qux()\r\n"
  },
  // errors
  {
    name: "identical strings",
    file: "a\n",
    old: "a",
    new: "a",
    expected: { error: "No changes to apply: oldString and newString are identical." }
  },
  {
    name: "not found shows the nearest candidates",
    file: "alpha()\nconst value = compute(1)\nomega()\n",
    old: "const value = compute(2, 3)",
    new: "x",
    expected: {
      error:
        "Could not find oldString in f.ts. Differences in whitespace, indentation, line endings and escaping " +
        "were tolerated and still nothing matched.\nThe most similar regions of the file:\n" +
        "--- line 2 (86% similar)\n2: const value = compute(1)\nCopy the text to replace exactly from the file."
    }
  },
  {
    name: "not found with nothing similar",
    file: "abc\n",
    old: "zzz qqq",
    new: "x",
    expected: {
      error:
        "Could not find oldString in f.ts. Differences in whitespace, indentation, line endings and escaping " +
        "were tolerated and still nothing matched.\nNothing in the file resembles it; read the file to see its current contents."
    }
  },
  {
    name: "whitespace-only oldString is never fuzzily matched",
    file: "a\n\nb\n",
    old: "   ",
    new: "x",
    expected: { error: /^Could not find oldString/ }
  }
]

describe("edit matching", () => {
  it("has at least 40 cases", () => {
    expect(cases.length).toBeGreaterThanOrEqual(40)
  })

  for (const c of cases) {
    it(c.name, () => {
      if (typeof c.expected === "string") {
        const result = edit(c)
        expect(result.text).toBe(c.expected)
        if (c.matcher) expect(result.matcher).toBe(c.matcher)
      } else if (typeof c.expected.error === "string") {
        expect(() => edit(c)).toThrow(new Error(c.expected.error))
      } else {
        expect(() => edit(c)).toThrow(c.expected.error)
      }
    })
  }

  it("reports the changed line range in the new text", () => {
    const applied = applyEdit("a\nb\nc\nd\n", { oldString: "b\nc", newString: "x\ny\nz" }, "f.ts")
    expect([applied.startLine, applied.endLine]).toEqual([2, 4])
  })

  it("a block anchor is accepted only when it is the single candidate above the threshold", () => {
    const outcome = findMatches(twoFunctions, "function b() {\n  const y = 3\n  return y\n}", "", false)
    expect(outcome.kind).toBe("found")
    if (outcome.kind === "found") expect(outcome.replacements[0]?.start).toBe(twoFunctions.indexOf("function b"))
  })
})
