/**
 * @lathe/notify: when a session goes idle, fails, or waits on a permission ask or a question, rings the terminal
 * (BEL, OSC 9 or OSC 777) or runs a command of your choice.
 *
 * ```json
 * { "plugin": [["@lathe/notify", { "style": "osc9" }]] }
 * ```
 */

import { definePlugin, type LatheEvent, type Plugin, scrubEnv } from "@lathe/plugin"
import { z } from "zod"
import { type NotifySpawn, spawnCommand } from "./command.js"
import { encode, NOTIFY_EVENTS, summarize } from "./notification.js"

export { COMMAND_TIMEOUT_MS, type NotifySpawn, spawnCommand } from "./command.js"
export { encode, NOTIFY_EVENTS, type NotifyEvent, type NotifyStyle, sanitize, summarize } from "./notification.js"

/** The plugin's options in config: `["@lathe/notify", { "style": "osc777", "title": "Lathe" }]`. */
export const NotifyOptions = z
  .object({
    /** How to ring the terminal (default "bell"); ignored when `command` is set. */
    style: z.enum(["bell", "osc9", "osc777"]).default("bell"),
    /** A program and its arguments to run instead (no shell); the event's summary is appended as the last argument. */
    command: z.array(z.string().min(1)).min(1).optional(),
    /** Notify even when stdout is not a terminal (default false). */
    force: z.boolean().default(false),
    /** The notification's title for OSC 9 / OSC 777 (default "Lathe"). */
    title: z.string().default("Lathe"),
    /** Which events notify (default: all four). */
    events: z.array(z.enum(NOTIFY_EVENTS)).optional()
  })
  .strict()

/** What the plugin writes to and runs with; injectable for tests. */
export interface NotifyDependencies {
  /** Writes bytes to the terminal. */
  readonly write: (text: string) => void
  /** Whether that output is a terminal; when false, nothing happens unless the `force` option is set. */
  readonly isTTY: boolean
  /** Runs the `command` option (default {@link spawnCommand}, the real thing). */
  readonly spawn?: NotifySpawn
  /** The environment the command starts from, before Lathe's secrets are removed (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>
}

/**
 * Builds the plugin over the given output; the default export writes to `process.stdout`. A turn that fails
 * notifies once (its error, not the idle that follows); an aborted turn and a subagent's child session do not
 * notify. Never throws from its hook: a failing command is logged as a warning.
 */
export const createNotifyPlugin = (dependencies: NotifyDependencies): Plugin =>
  definePlugin({
    name: "@lathe/notify",
    setup: (ctx) => {
      const parsed = NotifyOptions.safeParse(ctx.options)
      if (!parsed.success)
        throw new Error(
          `@lathe/notify: invalid options: ${z.prettifyError(parsed.error)}\n` +
            `Expected e.g. ["@lathe/notify", { "style": "osc9" }] or ` +
            `["@lathe/notify", { "command": ["notify-send", "Lathe"] }] in lathe.json.`
        )
      const options = parsed.data
      if (!dependencies.isTTY && !options.force) return {}
      const wanted = new Set<string>(options.events ?? NOTIFY_EVENTS)
      const spawn = dependencies.spawn ?? spawnCommand
      // The command is the person's own, so it runs outside the sandbox (it talks to the desktop), but without secrets.
      const env = scrubEnv(dependencies.env ?? process.env, { secrets: ctx.secrets }).env
      /** Sessions whose turn just failed: the idle that ends the turn is not announced again. */
      const failed = new Set<string>()

      /** Whether the session is a subagent's child session (unknown sessions count as top-level). */
      const isChild = async (sessionID: string) =>
        ctx.client.sessions.get(sessionID).then(
          (session) => session.parentID !== undefined,
          () => false
        )

      /** The summary to announce for an event, or `undefined` to stay quiet. */
      const announce = async (event: LatheEvent): Promise<string | undefined> => {
        if (!wanted.has(event.type)) return undefined
        if (event.type === "session.error") {
          if (event.error.name === "Aborted" || (await isChild(event.sessionID))) return undefined
          failed.add(event.sessionID)
        }
        if (event.type === "session.idle") {
          if (failed.delete(event.sessionID) || (await isChild(event.sessionID))) return undefined
        }
        return summarize(event)
      }

      return {
        event: async ({ event }) => {
          const summary = await announce(event)
          if (summary === undefined) return
          if (options.command) {
            const [file, ...args] = options.command
            if (file === undefined) return
            await spawn(file, [...args, summary], env).catch((error: unknown) =>
              ctx.log.warn(`notification command failed: ${error instanceof Error ? error.message : String(error)}`)
            )
          } else {
            dependencies.write(encode(options.style, options.title, summary))
          }
        }
      }
    }
  })

/** The plugin, ringing the terminal on `process.stdout` when it is a TTY. */
export default createNotifyPlugin({
  write: (text) => {
    process.stdout.write(text)
  },
  isTTY: process.stdout.isTTY === true
})
