import { symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { createReadTool } from "../src/read.js"
import { ToolState } from "../src/state.js"
import { harness, run, runError, tempDir } from "./helpers.js"

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52])

const setup = () => {
  const state = new ToolState()
  return { state, read: createReadTool(state), h: harness() }
}

describe("read", () => {
  it("returns numbered lines, asks read with the relative path and records the read", async () => {
    const { state, read, h } = setup()
    const file = h.write("src/a.ts", "one\ntwo\nthree\n")
    const out = await run(read, { filePath: "src/a.ts" }, h.ctx())
    expect(out.output).toBe("     1\tone\n     2\ttwo\n     3\tthree\n\n(End of file: 3 lines.)")
    expect(h.asks).toEqual([
      { permission: "read", patterns: ["src/a.ts"], metadata: { filepath: file, realPath: file } }
    ])
    expect(state.lastRead("ses_test", file)?.size).toBe(14)
    expect(state.lastRead("other", file)).toBeUndefined()
  })

  it("reads a window with offset and limit and says where to read on", async () => {
    const { read, h } = setup()
    h.write("big.txt", Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n"))
    const out = await run(read, { filePath: "big.txt", offset: 3, limit: 2 }, h.ctx())
    expect(out.output).toBe(
      "     3\tline 3\n     4\tline 4\n\n(Showing lines 3-4. More lines remain: read on with offset=5.)"
    )
  })

  it("defaults to 2,000 lines and cuts long lines at 2,000 chars", async () => {
    const { read, h } = setup()
    h.write("long.txt", `${"x".repeat(2500)}\n${Array.from({ length: 2100 }, () => "y").join("\n")}`)
    const out = await run(read, { filePath: "long.txt" }, h.ctx())
    const lines = out.output.split("\n")
    expect(lines[0]).toBe(`     1\t${"x".repeat(2000)}... (line cut at 2000 chars)`)
    expect(out.output).toContain("(Showing lines 1-2000. More lines remain: read on with offset=2001.)")
  })

  it("stops at 50 KB with a hint", async () => {
    const { read, h } = setup()
    h.write("wide.txt", Array.from({ length: 100 }, () => "z".repeat(1000)).join("\n"))
    const out = await run(read, { filePath: "wide.txt" }, h.ctx())
    expect(out.output).toMatch(/\(Showing lines 1-\d+, cut at 50 KB\. More lines remain: read on with offset=\d+\.\)$/)
    expect(Buffer.byteLength(out.output)).toBeLessThan(52 * 1024)
  })

  it("says so for an empty file", async () => {
    const { read, h } = setup()
    h.write("empty.txt", "")
    expect((await run(read, { filePath: "empty.txt" }, h.ctx())).output).toBe("(The file is empty.)")
  })

  it("refuses directories with a pointer to list", async () => {
    const { read, h } = setup()
    h.write("dir/x.txt", "x")
    expect(await runError(read, { filePath: "dir" }, h.ctx())).toEqual({
      _tag: "ToolExecutionError",
      message: "dir is a directory, not a file. Use the list tool to see what it contains."
    })
  })

  it("answers a missing file with did-you-mean candidates", async () => {
    const { read, h } = setup()
    h.write("src/config.ts", "")
    const error = await runError(read, { filePath: "src/confg.ts" }, h.ctx())
    expect(error.message).toBe(
      `File not found: ${h.path("src/confg.ts")}\n\nDid you mean one of these?\n${h.path("src/config.ts")}`
    )
  })

  it("refuses binary files and attaches images", async () => {
    const { read, h } = setup()
    h.write("blob.dat2", Buffer.from([1, 2, 0, 3, 4]))
    expect((await runError(read, { filePath: "blob.dat2" }, h.ctx())).message).toBe(
      "Cannot read binary file: blob.dat2. The read tool only shows text files."
    )
    h.write("pic.png", PNG)
    const out = await run(read, { filePath: "pic.png" }, h.ctx())
    expect(out.attachments).toEqual([
      { mime: "image/png", url: `data:image/png;base64,${PNG.toString("base64")}`, filename: "pic.png" }
    ])
  })

  it("fails past the end of the file", async () => {
    const { read, h } = setup()
    h.write("a.txt", "1\n2\n")
    expect((await runError(read, { filePath: "a.txt", offset: 9 }, h.ctx())).message).toBe(
      "Offset 9 is past the end of a.txt, which has 2 lines."
    )
  })

  it("asks external_directory for a file outside the project, also through a symlink", async () => {
    const { read, h } = setup()
    const outside = tempDir()
    const secret = join(outside, "secret.txt")
    writeFileSync(secret, "s")
    symlinkSync(outside, h.path("link"))
    await run(read, { filePath: "link/secret.txt" }, h.ctx())
    expect(h.asks[0]).toEqual({
      permission: "external_directory",
      patterns: [`${outside}/*`],
      always: [`${outside}/*`],
      metadata: { path: h.path("link/secret.txt"), realPath: secret, directory: outside }
    })
    h.mode = (request) => (request.permission === "external_directory" ? "reject" : "allow")
    expect(await runError(read, { filePath: secret }, h.ctx())).toEqual({
      _tag: "PermissionRejected",
      message: "The user rejected this external_directory request. Stop and wait for the user's next instruction."
    })
  })

  it("a denied read (e.g. a .env rule) reaches the model as the permission error", async () => {
    const { read, h } = setup()
    h.write(".env", "KEY=1")
    h.mode = "deny"
    expect(await runError(read, { filePath: ".env" }, h.ctx())).toEqual({
      _tag: "PermissionDenied",
      message:
        'Permission "read" is denied for ".env" by a rule. Do not retry it; choose another approach or ask the user.'
    })
  })

  it("rejects bad arguments with the schema message", async () => {
    const { read, h } = setup()
    expect(await runError(read, { filePath: "a", offset: 0 }, h.ctx())).toEqual({
      _tag: "ToolInvalidArguments",
      message:
        "The read tool was called with invalid arguments:\n- offset: Too small: expected number to be >=1\n" +
        "Rewrite the input so it satisfies the tool's schema and call it again."
    })
  })

  it("splits lines the same way whether the file is small (read whole) or large (streamed)", async () => {
    const { read, h } = setup()
    const text = "a\r\nb\rc\n\nd\r\n"
    // Past 64 KB the file is streamed through readline; the padding keeps the interesting lines first.
    h.write("small.txt", text)
    h.write("large.txt", text + "z\n".repeat(40_000))
    const small = await run(read, { filePath: "small.txt", limit: 5 }, h.ctx())
    const large = await run(read, { filePath: "large.txt", limit: 5 }, h.ctx())
    const lines = "     1\ta\n     2\tb\n     3\tc\n     4\t\n     5\td"
    expect(small.output).toBe(`${lines}\n\n(End of file: 5 lines.)`)
    expect(large.output).toBe(`${lines}\n\n(Showing lines 1-5. More lines remain: read on with offset=6.)`)
  })

  it("refuses a small file with a NUL byte as binary, without a binary extension", async () => {
    const { read, h } = setup()
    h.write("data.txt", "text\u0000more")
    expect(await runError(read, { filePath: "data.txt" }, h.ctx())).toMatchObject({
      message: "Cannot read binary file: data.txt. The read tool only shows text files."
    })
  })
})

describe("read recognises images by their bytes, not their name", () => {
  const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1])
  const gif = Buffer.concat([Buffer.from("GIF89a"), Buffer.from([1, 0, 1, 0, 0x80, 0, 0])])
  const webp = Buffer.concat([
    Buffer.from("RIFF"),
    Buffer.from([26, 0, 0, 0]),
    Buffer.from("WEBPVP8 "),
    Buffer.alloc(8)
  ])
  const bmp = Buffer.concat([
    Buffer.from("BM"),
    Buffer.from([58, 0, 0, 0, 0, 0, 0, 0, 54, 0, 0, 0, 40]),
    Buffer.alloc(45)
  ])
  const tiff = Buffer.concat([Buffer.from("II*"), Buffer.alloc(13)])
  const tiffBig = Buffer.concat([Buffer.from("MM"), Buffer.from([0, 0x2a]), Buffer.alloc(12)])

  it("attaches PNG, JPEG, GIF and WebP whatever the file is called", async () => {
    const { read, state, h } = setup()
    const cases: Array<[string, Buffer, string]> = [
      ["image.bin", jpeg, "image/jpeg"],
      ["shot", PNG, "image/png"],
      ["anim.txt", gif, "image/gif"],
      ["photo.jpg.dat", webp, "image/webp"]
    ]
    for (const [name, bytes, mime] of cases) {
      const file = h.write(name, bytes)
      const out = await run(read, { filePath: name }, h.ctx())
      expect(out.output, name).toBe(
        `Image read successfully: ${name} (${mime}, ${bytes.length} bytes). It is attached.`
      )
      expect(out.attachments, name).toEqual([
        { mime, url: `data:${mime};base64,${bytes.toString("base64")}`, filename: name }
      ])
      expect(state.lastRead("ses_test", file)).toBeDefined()
    }
  })

  it("a file named like an image that holds text is read as text", async () => {
    const { read, h } = setup()
    h.write("logo.png", "not really a picture\n")
    const out = await run(read, { filePath: "logo.png" }, h.ctx())
    expect(out.output).toBe("     1\tnot really a picture\n\n(End of file: 1 lines.)")
    expect(out.attachments).toBeUndefined()
  })

  it("BMP, TIFF and PDF are recognised but not attached: the binary message names the type", async () => {
    const { read, h } = setup()
    const cases: Array<[string, Buffer, string]> = [
      ["a.bmp", bmp, "BMP"],
      ["scan.png", tiff, "TIFF"],
      ["big-endian", tiffBig, "TIFF"],
      ["paper.txt", Buffer.from("%PDF-1.7\n%\u00e2\u00e3\n1 0 obj\n"), "PDF"]
    ]
    for (const [name, bytes, type] of cases) {
      h.write(name, bytes)
      expect(await runError(read, { filePath: name }, h.ctx()), name).toEqual({
        _tag: "ToolExecutionError",
        message: `Cannot read binary file: ${name} (a ${type} file; only PNG, JPEG, GIF and WebP images are attached). The read tool only shows text files.`
      })
    }
  })

  it("text that merely starts like a magic number stays text", async () => {
    const { read, h } = setup()
    h.write("cars.txt", "BMW and Audi\n")
    h.write("notes.md", "RIFF in music\n")
    expect((await run(read, { filePath: "cars.txt" }, h.ctx())).output).toContain("1\tBMW and Audi")
    expect((await run(read, { filePath: "notes.md" }, h.ctx())).output).toContain("1\tRIFF in music")
  })

  it("an image past 5 MB is refused even under another name; a large one is sniffed from its head", async () => {
    const { read, h } = setup()
    h.write("huge.bin", Buffer.concat([jpeg, Buffer.alloc(5 * 1024 * 1024)]))
    expect((await runError(read, { filePath: "huge.bin" }, h.ctx())).message).toBe(
      `huge.bin is an image of ${jpeg.length + 5 * 1024 * 1024} bytes; images over 5 MB are not attached.`
    )
    const big = Buffer.concat([PNG, Buffer.alloc(200 * 1024, 7)])
    h.write("big", big)
    expect((await run(read, { filePath: "big" }, h.ctx())).attachments?.[0]?.mime).toBe("image/png")
  })
})
