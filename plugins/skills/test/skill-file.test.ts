import { assert, describe, it } from "@effect/vitest"
import { nameProblem, parseSkillFile } from "../src/index.js"
import { skillText } from "./helpers.js"

/** The problem reported for a file, failing the test when it parses. */
const problem = (text: string, folder = "pdf-tools"): string => {
  const result = parseSkillFile(text, folder)
  if (result.ok) return assert.fail(`expected ${JSON.stringify(text)} to be rejected`)
  return result.problem
}

describe("parseSkillFile", () => {
  it("reads name, description, allowed-tools, license and the body", () => {
    const result = parseSkillFile(
      skillText(
        [
          "name: pdf-tools",
          "description: >-",
          "  Fill and merge PDF forms.",
          "  Use when the user mentions PDFs.",
          "allowed-tools: [read, bash]",
          "license: MIT",
          "metadata:",
          "  version: '1.2'"
        ],
        "\n# PDF tools\n\nRun `scripts/fill.py`.\n"
      ),
      "pdf-tools"
    )
    assert.deepStrictEqual(result, {
      ok: true,
      skill: {
        name: "pdf-tools",
        description: "Fill and merge PDF forms. Use when the user mentions PDFs.",
        allowedTools: ["read", "bash"],
        license: "MIT",
        body: "# PDF tools\n\nRun `scripts/fill.py`."
      }
    })
  })

  it("accepts allowed-tools as a space- or comma-separated string, CRLF line ends and a BOM", () => {
    const text = "\uFEFF---\r\nname: a1\r\ndescription: d\r\nallowed-tools: read, grep  bash\r\n---\r\nbody\r\n"
    const result = parseSkillFile(text, "a1")
    assert.isTrue(result.ok)
    if (result.ok) {
      assert.deepStrictEqual(result.skill.allowedTools, ["read", "grep", "bash"])
      assert.strictEqual(result.skill.body, "body")
    }
  })

  it("rejects a file without front matter", () => {
    assert.strictEqual(
      problem("# Just markdown\n"),
      `SKILL.md must start with YAML front matter between two "---" lines, setting name and description`
    )
    assert.strictEqual(problem("---\nname: pdf-tools\ndescription: d\n"), problem("# Just markdown\n"))
  })

  it("rejects front matter that is not YAML or not a mapping", () => {
    assert.match(problem(skillText(["name: [unclosed", "description: d"])), /^the front matter is not valid YAML: /)
    assert.strictEqual(
      problem(skillText(["- a list"])),
      "the front matter must be a YAML mapping of fields (name: …, description: …)"
    )
    assert.strictEqual(
      problem("---\n---\nbody"),
      "the front matter must be a YAML mapping of fields (name: …, description: …)"
    )
  })

  it("names each missing or mistyped field", () => {
    assert.strictEqual(
      problem(skillText(["description: d"])),
      'invalid front matter: field "name" is required and must be a string'
    )
    assert.strictEqual(
      problem(skillText(["name: pdf-tools", "description: '  '"])),
      'invalid front matter: field "description" must not be empty'
    )
    assert.strictEqual(
      problem(skillText(["name: pdf-tools", `description: ${"x".repeat(1025)}`])),
      'invalid front matter: field "description" must be at most 1024 characters'
    )
    assert.strictEqual(
      problem(skillText(["name: pdf-tools", "description: d", "license: 3", "allowed-tools: 4"])),
      'invalid front matter: field "allowed-tools" must be a list of tool names or a string of them; ' +
        'field "license" must be a string'
    )
  })

  it("applies the Agent Skills name rules and the folder rule", () => {
    const invalid = (name: string) =>
      `the name "${name}" is invalid: use only lowercase letters, digits and hyphens ` +
      "(no hyphen at the start or end, never two in a row)"
    for (const name of ["PDF-tools", "pdf_tools", "-pdf", "pdf-", "pdf--tools", "pdf tools", "pdf.tools"])
      assert.strictEqual(problem(skillText([`name: "${name}"`, "description: d"]), name), invalid(name))
    const long = "a".repeat(65)
    assert.strictEqual(
      problem(skillText([`name: ${long}`, "description: d"]), long),
      `the name "${long}" is 65 characters long; the limit is 64`
    )
    assert.strictEqual(problem(skillText(['name: ""', "description: d"]), ""), "the name must not be empty")
    assert.strictEqual(
      problem(skillText(["name: pdf-tools", "description: d"]), "pdf"),
      'the name "pdf-tools" must equal its folder name "pdf"'
    )
  })

  it("nameProblem accepts valid names", () => {
    for (const name of ["a", "pdf-tools", "v2", "a".repeat(64), "x-1-y"]) assert.isUndefined(nameProblem(name))
  })
})
