import { readFile, writeFile } from "node:fs/promises"
import * as acp from "@agentclientprotocol/sdk"
import type { HostFiles, HostTerminal } from "@lathe/plugin"

/** What the client's terminal keeps of a command's output: as much as bash keeps of its own (32 MB). */
const OUTPUT_LIMIT = 32 * 1024 * 1024

/** What the editor's side needs of the agent: its connection, and the editor session a Lathe session belongs to. */
export interface ClientSideHost {
  readonly client: () => acp.AgentContext | undefined
  /** The editor's session ID for a Lathe session (its own, or the one a subagent session was started from). */
  readonly sessionOf: (sessionID: string) => string | undefined
  /** A terminal started for a call: the editor shows it in the call (`tool_call_update` with terminal content). */
  readonly onTerminal: (sessionID: string, callID: string, terminalId: string) => void
  readonly warn: (text: string) => void
}

/**
 * The editor's buffers as the tools' `ctx.files`, when it offers both `fs/read_text_file` and `fs/write_text_file`:
 * the agent reads what the person sees (unsaved changes too) and its edits land in the editor. Snapshots and `lathe
 * undo` look at the disk, so after a write the file is checked there; an editor that kept the text in a buffer without
 * saving it is told about on stderr (its person's choice: that change is not in the step's snapshot).
 */
export const clientFiles = (
  capabilities: acp.ClientCapabilities | undefined,
  host: ClientSideHost
): HostFiles | undefined => {
  if (capabilities?.fs?.readTextFile !== true || capabilities.fs.writeTextFile !== true) return undefined
  const editor = (sessionID: string) => {
    const to = host.client()
    const sessionId = host.sessionOf(sessionID)
    return to && sessionId ? { to, sessionId } : undefined
  }
  return {
    readText: async (path, at) => {
      const found = editor(at.sessionID)
      if (!found) return readFile(path, "utf8")
      const read = await found.to
        .request(acp.methods.client.fs.readTextFile, { sessionId: found.sessionId, path })
        .catch((error: unknown) => {
          throw new Error(`The editor could not read ${path}: ${acpMessage(error)}`)
        })
      return read.content
    },
    writeText: async (path, text, at) => {
      const found = editor(at.sessionID)
      // A session the editor does not show (none is expected): the disk, as without the capability.
      if (!found) return writeFile(path, text)
      await found.to
        .request(acp.methods.client.fs.writeTextFile, { sessionId: found.sessionId, path, content: text })
        .catch((error: unknown) => {
          throw new Error(`The editor could not write ${path}: ${acpMessage(error)}`)
        })
      const onDisk = await readFile(path, "utf8").catch(() => undefined)
      if (onDisk !== text)
        host.warn(
          `lathe acp: the editor took the write of ${path} but did not save it to disk: the step's snapshot and ` +
            "`lathe undo` do not cover that change.\n"
        )
    }
  }
}

/**
 * The editor's terminal as the tools' `ctx.terminal`, when it offers one: bash's command (inside the sandbox, as
 * Lathe would spawn it) runs there through `terminal/create`, the call shows it, and `terminal/output`,
 * `terminal/wait_for_exit` and `terminal/release` bring its end back; a timeout or an abort sends `terminal/kill`.
 */
export const clientTerminal = (
  capabilities: acp.ClientCapabilities | undefined,
  host: ClientSideHost
): HostTerminal | undefined => {
  if (capabilities?.terminal !== true) return undefined
  return {
    run: async (command) => {
      const to = host.client()
      const sessionId = host.sessionOf(command.sessionID)
      if (!to || !sessionId) throw new Error("No editor session to run the command in.")
      const handle = await to
        .createTerminal({
          sessionId,
          command: command.file,
          args: [...command.args],
          cwd: command.cwd,
          env: Object.entries(command.env).map(([name, value]) => ({ name, value })),
          outputByteLimit: OUTPUT_LIMIT
        })
        .catch((error: unknown) => {
          throw new Error(`The editor could not start the command in a terminal: ${acpMessage(error)}`)
        })
      host.onTerminal(command.sessionID, command.callID, handle.id)
      let timedOut = false
      let aborted = false
      const kill = () => void handle.kill().catch(() => undefined)
      const onAbort = () => {
        aborted = true
        kill()
      }
      if (command.signal.aborted) onAbort()
      else command.signal.addEventListener("abort", onAbort, { once: true })
      const timer = setTimeout(() => {
        timedOut = true
        kill()
      }, command.timeoutMs)
      try {
        const exit = await handle.waitForExit()
        const output = await handle.currentOutput()
        return {
          output: output.output,
          exitCode: exit.exitCode ?? null,
          signal: exit.signal ?? null,
          timedOut,
          aborted
        }
      } finally {
        clearTimeout(timer)
        command.signal.removeEventListener("abort", onAbort)
        await handle.release().catch(() => undefined)
      }
    }
  }
}

const acpMessage = (error: unknown): string => (error instanceof Error ? error.message : String(error))
