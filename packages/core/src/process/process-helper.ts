/**
 * A small shell that starts programs for Lathe, so that each call is not a fork of Lathe itself. Starting a program
 * from Node forks the whole process (libuv on Linux uses `fork`, not `vfork`), and a fork copies the page tables of
 * everything the process has touched: on the machines measured it costs ~0.055 ms per MiB of RSS (2 ms at 50 MiB,
 * 16 ms at 300 MiB), and a long session's snapshots run git ~8 times per step. `/bin/sh` is a few MiB, so its fork is
 * cheap whatever size Lathe has grown to.
 *
 * One helper serves one call at a time (a call that comes while it is busy runs through `runProcess` as usual). The
 * call's input and output go through files in a private temporary directory; its exit code comes back as a line. The
 * helper ends when Lathe closes it or exits (its stdin reaches end of file) and removes that directory.
 *
 * What it gives up against {@link runProcess}: the program is not in a process group of its own (stopping it signals
 * the program itself, not what it started; `git` stops its own children), an exit code above 128 is reported as that
 * code unless Lathe stopped the program itself, and a missing program shows as exit 127 (turned back into `ENOENT`).
 */
import { type ChildProcessByStdio, spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Readable, Writable } from "node:stream"
import { DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_RUN_TIMEOUT_MS, type ProcessResult, runProcess } from "./run-process.js"

/** One call through a {@link ProcessHelper}. */
export interface HelperRunOptions {
  /** The program: a name looked up on the helper's PATH, or a path. */
  readonly file: string
  readonly args?: ReadonlyArray<string>
  /** The working directory (default: this process's). */
  readonly cwd?: string
  /** Variables set for this call only, over the helper's environment. */
  readonly env?: Readonly<Record<string, string>>
  /** Written to stdin (default: stdin empty). */
  readonly input?: string | Uint8Array
  /** Stops the program when aborted. */
  readonly signal?: AbortSignal
  /** The program is stopped after this long (default: `runProcess`'s 2 minutes; `Infinity`: no limit). */
  readonly timeoutMs?: number
  /** Between SIGTERM and SIGKILL when stopping the program (default 200 ms; 0 sends SIGKILL at once). */
  readonly killGraceMs?: number
  /** Bytes kept per stream (default: `runProcess`'s 4 MiB). */
  readonly maxOutputBytes?: number
}

/** A long-lived shell that starts programs on request; see the module's comment. */
export interface ProcessHelper {
  /**
   * Runs one program to its end, like {@link runProcess}: a failing program is a result, the promise rejects only
   * when it cannot be started. Its environment is the helper's with `options.env` on top.
   */
  readonly run: (options: HelperRunOptions) => Promise<ProcessResult>
  /** Ends the helper (a call in progress finishes first); later calls start a new one. */
  readonly close: () => void
  /** The helper shell's pid while it runs (for tests). */
  readonly pid: () => number | undefined
}

/** How to start a {@link ProcessHelper}. */
export interface ProcessHelperOptions {
  /** The environment of the helper and so of every program it starts (e.g. core's `gitEnv()`). */
  readonly env: Readonly<Record<string, string>>
  /** The shell (default `/bin/sh`); without one, every call runs through `runProcess`. */
  readonly shell?: string
}

const DEFAULT_KILL_GRACE_MS = 200
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/** One argument for the shell, taken literally. */
const quote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`

/** The helper's loop: each line is a command built by {@link commandLine}; it reads until Lathe closes its stdin. */
const script = (dir: string) => `while IFS= read -r line; do eval "$line"; done; rm -rf -- ${quote(dir)}`

interface Shell {
  readonly child: ChildProcessByStdio<Writable, Readable, null>
  readonly dir: string
  /** Lines from the shell not yet taken. */
  readonly lines: Array<string>
  /** Called when a line arrives or the shell ends. */
  wake: (() => void) | undefined
  ended: boolean
}

/** The files one call's input and output go through. */
interface HelperFiles {
  readonly in: string
  readonly out: string
  readonly err: string
}

/** A finished call's result from its exit code and output files, as `runProcess` gives it. */
const resultOf = (
  call: HelperRunOptions,
  files: HelperFiles,
  code: number,
  timedOut: boolean,
  aborted: boolean
): ProcessResult => {
  const cap = call.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES
  const read = (file: string) => {
    try {
      return readFileSync(file)
    } catch {
      return Buffer.alloc(0)
    }
  }
  const stdout = read(files.out)
  const stderr = read(files.err)
  // What the shell says when `exec` finds no such program: as `spawn`, a program that cannot start rejects.
  if (code === 127 && stdout.length === 0 && /not found|No such file/i.test(stderr.toString("utf8"))) {
    throw Object.assign(new Error(`spawn ${call.file} ENOENT`), { code: "ENOENT", path: call.file })
  }
  const stopped = (timedOut || aborted) && code > 128
  const keep = (bytes: Buffer) => (bytes.length > cap ? bytes.subarray(0, cap) : bytes)
  return {
    exitCode: stopped ? null : code,
    signal: stopped ? signalName(code - 128) : null,
    stdout: keep(stdout),
    stderr: keep(stderr),
    timedOut,
    aborted,
    truncated: stdout.length > cap || stderr.length > cap
  }
}

/** The line that runs one call in the background, says its pid, waits for it and says its exit code. */
const commandLine = (call: HelperRunOptions, files: HelperFiles): string => {
  const assignments = Object.entries(call.env ?? {}).map(([key, value]) => `${key}=${quote(value)} `)
  const program = [call.file, ...(call.args ?? [])].map(quote).join(" ")
  const cd = `cd -- ${quote(call.cwd ?? process.cwd())} && `
  return (
    `( ${cd}${assignments.join("")}exec ${program} ) <${quote(files.in)} >${quote(files.out)} 2>${quote(files.err)} & ` +
    `echo "s $!"; wait $!; echo "e $?"`
  )
}

/** Whether the line protocol can carry `call` (no newline or NUL in any part, environment names plain). */
const carried = (call: HelperRunOptions): boolean =>
  ![call.file, call.cwd ?? "", ...(call.args ?? []), ...Object.values(call.env ?? {})].some((s) => /[\n\0]/.test(s)) &&
  Object.keys(call.env ?? {}).every((key) => NAME.test(key))

/**
 * Starts programs through a long-lived `/bin/sh` (see the module's comment), started at the first call. Falls back to
 * {@link runProcess} for a call made while another runs, for arguments the line protocol cannot carry (a newline), on
 * Windows, and when the shell is missing.
 */
export const startProcessHelper = (options: ProcessHelperOptions): ProcessHelper => {
  const shellPath = options.shell ?? "/bin/sh"
  const usable = process.platform !== "win32" && existsSync(shellPath)
  let shell: Shell | undefined
  let busy = false

  const open = (): Shell => {
    if (shell && !shell.ended) return shell
    const dir = mkdtempSync(join(tmpdir(), "lathe-helper-"))
    const child = spawn(shellPath, ["-c", script(dir)], {
      env: { ...options.env },
      // Its own process group: a Ctrl-C at the terminal does not reach the programs it runs (as with `runProcess`).
      detached: true,
      stdio: ["pipe", "pipe", "ignore"]
    })
    const opened: Shell = { child, dir, lines: [], wake: undefined, ended: false }
    let buffer = ""
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => {
      buffer += chunk
      const lines = buffer.split("\n")
      buffer = lines.pop() ?? ""
      opened.lines.push(...lines)
      opened.wake?.()
    })
    const end = () => {
      if (opened.ended) return
      opened.ended = true
      rmSync(dir, { recursive: true, force: true })
      opened.wake?.()
    }
    child.on("close", end)
    child.on("error", end)
    child.stdin.on("error", () => undefined)
    // An idle helper must not keep Lathe running: its handles count only while a call waits on them.
    child.unref()
    idle(opened)
    shell = opened
    return opened
  }

  /** The shell's pipes keep the event loop alive only during a call. */
  const idle = (s: Shell) => {
    ;(s.child.stdout as Readable & { unref?: () => void }).unref?.()
    ;(s.child.stdin as Writable & { unref?: () => void }).unref?.()
  }
  const active = (s: Shell) => {
    ;(s.child.stdout as Readable & { ref?: () => void }).ref?.()
  }

  /** The next line from the shell, or undefined once it has ended. */
  const nextLine = (s: Shell): Promise<string | undefined> =>
    new Promise((resolve) => {
      const take = () => {
        const line = s.lines.shift()
        if (line !== undefined || s.ended) {
          s.wake = undefined
          resolve(line)
          return true
        }
        return false
      }
      if (!take()) s.wake = () => void take()
    })

  const direct = (call: HelperRunOptions): Promise<ProcessResult> =>
    runProcess({
      file: call.file,
      args: call.args ?? [],
      ...(call.cwd === undefined ? {} : { cwd: call.cwd }),
      env: { ...options.env, ...call.env },
      ...(call.input === undefined ? {} : { input: call.input }),
      ...(call.signal === undefined ? {} : { signal: call.signal }),
      ...(call.timeoutMs === undefined ? {} : { timeoutMs: call.timeoutMs }),
      ...(call.killGraceMs === undefined ? {} : { killGraceMs: call.killGraceMs }),
      ...(call.maxOutputBytes === undefined ? {} : { maxOutputBytes: call.maxOutputBytes })
    })

  const viaShell = async (call: HelperRunOptions): Promise<ProcessResult> => {
    const s = open()
    // One call at a time: the same three files serve every call (the shell's `>` empties them), and they are small,
    // so plain synchronous reads and writes cost less than the promise API's file handles.
    const files = {
      in: call.input === undefined || call.input.length === 0 ? "/dev/null" : join(s.dir, "in"),
      out: join(s.dir, "out"),
      err: join(s.dir, "err")
    }
    if (files.in !== "/dev/null") writeFileSync(files.in, call.input ?? "")
    let pid: number | undefined
    let timedOut = false
    let aborted = false
    let stopping = false
    let killTimer: NodeJS.Timeout | undefined
    const signal = (name: NodeJS.Signals) => {
      if (pid === undefined) return
      try {
        process.kill(pid, name)
      } catch {
        // ESRCH: it has exited.
      }
    }
    const grace = call.killGraceMs ?? DEFAULT_KILL_GRACE_MS
    const stop = () => {
      if (stopping) return
      stopping = true
      if (grace <= 0) return signal("SIGKILL")
      signal("SIGTERM")
      killTimer = setTimeout(() => signal("SIGKILL"), grace)
    }
    const limit = call.timeoutMs ?? DEFAULT_RUN_TIMEOUT_MS
    const timer = Number.isFinite(limit)
      ? setTimeout(() => {
          timedOut = true
          stop()
        }, limit)
      : undefined
    const onAbort = () => {
      aborted = true
      stop()
    }
    active(s)
    try {
      s.child.stdin.write(`${commandLine(call, files)}\n`)
      const started = await nextLine(s)
      if (started?.startsWith("s ")) pid = Number(started.slice(2))
      // Stopped before its pid was known: stop it now.
      if (stopping) {
        stopping = false
        stop()
      }
      if (call.signal?.aborted) onAbort()
      else call.signal?.addEventListener("abort", onAbort, { once: true })
      const ended = started === undefined ? undefined : await nextLine(s)
      if (ended === undefined || !ended.startsWith("e ")) {
        throw Object.assign(new Error(`the process helper (${shellPath}) ended during a call of ${call.file}`), {
          code: "EHELPER"
        })
      }
      return resultOf(call, files, Number(ended.slice(2)), timedOut, aborted)
    } finally {
      clearTimeout(timer)
      if (killTimer) clearTimeout(killTimer)
      call.signal?.removeEventListener("abort", onAbort)
      if (!s.ended) idle(s)
    }
  }

  return {
    run: async (call) => {
      if (!usable || busy || !carried(call)) return direct(call)
      busy = true
      try {
        return await viaShell(call)
      } finally {
        busy = false
      }
    },
    close: () => {
      if (shell && !shell.ended) shell.child.stdin.end()
      shell = undefined
    },
    pid: () => (shell && !shell.ended ? shell.child.pid : undefined)
  }
}

const SIGNALS: Record<number, NodeJS.Signals> = { 1: "SIGHUP", 2: "SIGINT", 9: "SIGKILL", 13: "SIGPIPE", 15: "SIGTERM" }
const signalName = (n: number): NodeJS.Signals => SIGNALS[n] ?? "SIGTERM"
