import { spawn } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import type { HostFiles, HostTerminal, HostTerminalCommand } from "@lathe/plugin"
import { createBashTool } from "../src/bash.js"
import { createTools } from "../src/index.js"
import { harness, run, tempDir } from "./helpers.js"

// The host's `ctx.files` and `ctx.terminal` (an editor's buffers and terminal under `lathe acp`): the file tools' text
// goes through them, bash's command runs in the terminal exactly as it would have been spawned here.

/** Buffers over the disk: a read of a path with a buffer gets the buffer; writes are saved to disk. */
const buffered = (buffers: Map<string, string>) => {
  const calls: Array<string> = []
  const files: HostFiles = {
    readText: async (path, at) => {
      calls.push(`read ${path} ${at.sessionID}`)
      return buffers.get(path) ?? readFileSync(path, "utf8")
    },
    writeText: async (path, text, at) => {
      calls.push(`write ${path} ${at.sessionID}`)
      buffers.set(path, text)
      writeFileSync(path, text)
    }
  }
  return { files, calls }
}

/** A terminal that runs the command as a real process and keeps what it was asked to run. */
const spawning = () => {
  const asked: Array<HostTerminalCommand> = []
  const terminal: HostTerminal = {
    run: (command) =>
      new Promise((resolve) => {
        asked.push(command)
        const child = spawn(command.file, [...command.args], {
          cwd: command.cwd,
          env: command.env,
          stdio: ["ignore", "pipe", "pipe"]
        })
        let output = ""
        child.stdout.on("data", (chunk: Buffer) => {
          output += chunk.toString("utf8")
        })
        child.stderr.on("data", (chunk: Buffer) => {
          output += chunk.toString("utf8")
        })
        child.on("close", (exitCode, signal) => resolve({ output, exitCode, signal, timedOut: false, aborted: false }))
      })
  }
  return { terminal, asked }
}

const tool = (tools: ReturnType<typeof createTools>, id: string) => {
  const found = tools.find((t) => t.id === id)
  if (!found) throw new Error(`no ${id}`)
  return found
}

describe("the host's files and terminal", () => {
  it("read, edit and write go through ctx.files: the buffer's text, not the disk's", async () => {
    const h = harness()
    const file = h.write("a.txt", "on disk\n")
    const { files, calls } = buffered(new Map([[file, "in the buffer\n"]]))
    const tools = createTools({ files })
    const read = await run(tool(tools, "read"), { filePath: "a.txt" }, h.ctx())
    expect(read.output).toContain("in the buffer")
    await run(tool(tools, "edit"), { filePath: "a.txt", oldString: "the buffer", newString: "an edit" }, h.ctx())
    expect(readFileSync(file, "utf8")).toBe("in an edit\n")
    await run(tool(tools, "write"), { filePath: "a.txt", content: "rewritten\n" }, h.ctx())
    const patch = "*** Begin Patch\n*** Add File: b/new.txt\n+new\n*** End Patch"
    await run(tool(tools, "apply_patch"), { patchText: patch }, h.ctx())
    expect(readFileSync(h.path("b/new.txt"), "utf8")).toBe("new\n")
    expect(calls).toEqual([
      `read ${file} ses_test`,
      `read ${file} ses_test`,
      `write ${file} ses_test`,
      `read ${file} ses_test`,
      `write ${file} ses_test`,
      `write ${h.path("b/new.txt")} ses_test`
    ])
  })

  it("bash runs in ctx.terminal, inside the sandbox, whose seccomp filter reaches it through a file", async () => {
    const h = harness()
    const { terminal, asked } = spawning()
    const sandboxed = process.platform === "linux"
    const bash = createBashTool({
      terminal,
      ...(sandboxed ? { sandbox: { mode: "workspace-write" }, tempDir: tempDir(), truncationDir: tempDir() } : {})
    })
    const out = await run(bash, { command: "echo from the terminal", description: "Echo" }, h.ctx())
    expect(out.output).toContain("from the terminal")
    expect(h.asks.map((a) => a.permission)).toEqual(["bash"])
    const command = asked[0]
    expect(command?.args).toContain("echo from the terminal")
    expect(command?.cwd).toBe(h.root)
    expect(command?.env.TERM).toBe("dumb")
    if (sandboxed && out.metadata.sandbox === "bubblewrap") {
      expect(command?.file).toBe("/bin/sh")
      expect(command?.args).toContain("--seccomp")
      // The filter is in force: a Unix socket is refused inside.
      const socket = await run(
        bash,
        {
          command: `node -e "require('net').createServer().listen('s.sock',()=>console.log('listening')).on('error',e=>{console.log(e.code);process.exit(0)})"`,
          description: "Open a Unix socket"
        },
        h.ctx()
      )
      expect(socket.output).not.toContain("listening")
      expect(socket.output).toMatch(/EACCES|EPERM/)
    }
  })

  it("without a terminal, bash runs the command itself", async () => {
    const h = harness()
    const out = await run(createBashTool(), { command: "echo by lathe", description: "Echo" }, h.ctx())
    expect(out.output).toContain("by lathe")
  })
})
