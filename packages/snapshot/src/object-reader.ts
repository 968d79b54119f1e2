import { type ChildProcessByStdio, spawn } from "node:child_process"
import type { Readable, Writable } from "node:stream"
import { environment, type GitTarget } from "./git.js"

/** One object's type (`blob`, `tree`, …) and content. */
export interface GitObject {
  readonly type: string
  readonly body: Buffer
}

/**
 * A long-lived `git cat-file --batch` on the shadow repository: reads objects wherever git keeps them (loose, packed,
 * in the user's repository the shadow borrows from) without starting a process per read. Started at the first read;
 * every read after that is a line written and an answer read. A process that fails or exits makes every read, then
 * and after, give `undefined` (the caller goes through git as before).
 */
export interface ObjectReader {
  /** Object `hash` (40 hex digits), or `undefined` when it is missing, the hash is not one, or the reader failed. */
  readonly read: (hash: string) => Promise<GitObject | undefined>
  /** Stops the process. */
  readonly close: () => void
}

export const makeObjectReader = (target: GitTarget): ObjectReader => {
  let child: ChildProcessByStdio<Writable, Readable, null> | undefined
  let failed = false
  let buffer: Buffer = Buffer.alloc(0)
  const waiting: Array<(object: GitObject | undefined) => void> = []
  // The pipes keep the process alive only while a read waits: an idle reader never holds up an exit.
  const hold = (on: boolean) => {
    const out = child?.stdout as (Readable & { ref?: () => void; unref?: () => void }) | undefined
    if (on) out?.ref?.()
    else out?.unref?.()
  }
  const fail = () => {
    failed = true
    for (const resolve of waiting.splice(0)) resolve(undefined)
    child?.kill()
    child = undefined
  }
  const drain = () => {
    while (waiting.length > 0) {
      const end = buffer.indexOf(10)
      if (end === -1) return
      // `<hash> <type> <size>` then the content and a newline; `<hash> missing` alone.
      const [, type, size] = buffer.subarray(0, end).toString("latin1").split(" ")
      if (type === undefined || size === undefined) {
        buffer = buffer.subarray(end + 1)
        waiting.shift()?.(undefined)
        continue
      }
      const length = Number(size)
      if (buffer.length < end + 1 + length + 1) return
      const body = Buffer.from(buffer.subarray(end + 1, end + 1 + length))
      buffer = buffer.subarray(end + 2 + length)
      waiting.shift()?.({ type, body })
    }
    if (waiting.length === 0) hold(false)
  }
  const started = () => {
    if (child !== undefined || failed) return child
    try {
      const process = spawn(target.binary, [...target.global, "cat-file", "--batch"], {
        cwd: target.cwd,
        env: environment(undefined),
        stdio: ["pipe", "pipe", "ignore"]
      })
      child = process
      process.stdout.on("data", (chunk: Buffer) => {
        buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk])
        drain()
      })
      process.on("error", fail)
      process.on("exit", fail)
      process.stdin.on("error", fail)
      process.unref()
      ;(process.stdin as Writable & { unref?: () => void }).unref?.()
      hold(false)
    } catch {
      fail()
    }
    return child
  }
  return {
    read: (hash) => {
      if (!/^[0-9a-f]{40}$/.test(hash)) return Promise.resolve(undefined)
      const process = started()
      if (process === undefined) return Promise.resolve(undefined)
      return new Promise((resolve) => {
        waiting.push(resolve)
        hold(true)
        process.stdin.write(`${hash}\n`)
      })
    },
    close: () => {
      const process = child
      child = undefined
      failed = true
      for (const resolve of waiting.splice(0)) resolve(undefined)
      process?.stdin.end()
      process?.kill()
    }
  }
}
