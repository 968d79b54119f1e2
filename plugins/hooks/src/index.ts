/**
 * @lathe/hooks: runs shell hooks written for Claude Code (`~/.claude/settings.json`, a trusted project's
 * `.claude/settings.json` and `.claude/settings.local.json`) and Lathe's own (`hooks` in lathe.json, the same shape) at
 * the matching points of a session, with Claude Code's contract: JSON on stdin, exit code 2 blocks, JSON on stdout
 * decides. Built in; switch it off with `"disabled_plugins": ["@lathe/hooks"]`.
 */

import { definePlugin, type LatheEvent, type Plugin, type PluginHooks, scrubEnv } from "@lathe/plugin"
import { postToolUse, preToolUse, promptSubmit, sessionStart, stop } from "./decisions.js"
import { type HookResult, runHookCommand } from "./run-command.js"
import { type HookCommand, type HookEvent, loadHooks } from "./settings.js"
import { applyUpdatedInput, claudeInput, claudeToolName } from "./tool-names.js"

export * from "./decisions.js"
export * from "./run-command.js"
export * from "./settings.js"
export * from "./tool-names.js"

/** Options of {@link createHooksPlugin}. */
export interface HooksPluginOptions {
  /** The environment hooks start from, before Lathe's secrets are removed (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>
}

/** The Notification a Bus event stands for, if any. */
const notification = (event: LatheEvent): { readonly message: string; readonly type: string } | undefined => {
  if (event.type === "permission.asked")
    return {
      message: `Lathe needs your permission to use ${claudeToolName(event.permission)}`,
      type: "permission_prompt"
    }
  if (event.type === "question.asked") return { message: "Lathe has a question for you", type: "elicitation_dialog" }
  if (event.type === "session.idle") return { message: "Lathe is waiting for your input", type: "idle_prompt" }
  return undefined
}

/** Builds the plugin; the default export is `createHooksPlugin()`. */
export const createHooksPlugin = (options: HooksPluginOptions = {}): Plugin =>
  definePlugin({
    name: "@lathe/hooks",
    setup: (ctx) => {
      const config = ctx.config
      const loaded = loadHooks({
        home: ctx.home,
        root: ctx.root,
        trusted: ctx.trusted,
        ...(config.hooks ? { config: { hooks: config.hooks, source: "lathe.json `hooks`" } } : {})
      })
      for (const problem of loaded.problems) ctx.log.warn(problem)
      if (loaded.untrusted.length > 0)
        ctx.log.warn(
          `Ignored the hooks in ${loaded.untrusted.join(" and ")}: this project is not trusted. ` +
            `Run \`lathe trust\` in ${ctx.root} to run them.`
        )
      const groups = loaded.groups
      if (groups.length === 0) return {}
      const has = (event: HookEvent) => groups.some((group) => group.event === event)

      const env = {
        ...scrubEnv(options.env ?? process.env, {
          inherit: config.shell?.env?.inherit ?? [],
          secrets: ctx.secrets
        }).env,
        CLAUDE_PROJECT_DIR: ctx.root,
        LATHE_PROJECT_DIR: ctx.root
      }
      // A hook runs inside a plugin hook, which the host stops at plugin_timeout_ms: each command stops a second before.
      const hostLimitMs = ctx.hookTimeoutMs
      // The MCP servers' names (the keys of config `mcp`), to name their tools as Claude Code does.
      const mcp = config.mcp
      const servers = typeof mcp === "object" && mcp !== null ? Object.keys(mcp) : []
      const toolName = (tool: string) => claudeToolName(tool, servers)

      /** Runs the event's matching commands (each once) in parallel; failures become notices. */
      const run = async (
        event: HookEvent,
        name: string | undefined,
        payload: Readonly<Record<string, unknown>>,
        limited = true
      ): Promise<Array<HookResult>> => {
        const seen = new Set<string>()
        const commands: Array<HookCommand> = []
        for (const group of groups) {
          if (group.event !== event || (name !== undefined && !group.matches(name))) continue
          for (const command of group.commands) {
            if (seen.has(command.command)) continue
            seen.add(command.command)
            commands.push(command)
          }
        }
        const input = { cwd: ctx.directory, hook_event_name: event, ...payload }
        return Promise.all(
          commands.map(async (command) => {
            const wanted = command.timeoutSeconds * 1000
            const cap = limited ? Math.max(1000, hostLimitMs - 1000) : wanted
            const result = await runHookCommand({
              command: command.command,
              input,
              cwd: ctx.directory,
              env,
              timeoutMs: Math.min(wanted, cap)
            })
            if (result.kind === "error") {
              const raise =
                result.timedOut && wanted > cap
                  ? ` (plugin hooks may run ${hostLimitMs} ms: raise plugin_timeout_ms in lathe.json to give it longer)`
                  : ""
              ctx.log.warn(`A ${event} hook from ${command.source} failed: ${result.message}${raise}`)
            }
            if (result.kind === "ok" && result.json?.systemMessage) ctx.log.warn(result.json.systemMessage)
            return result
          })
        )
      }

      /**
       * Calls a PreToolUse hook approved (by session and call id): their permission asks are answered yes. Each call's
       * entry is reset when its PreToolUse runs, so a provider that reuses call ids never inherits an approval.
       */
      const approved = new Set<string>()
      const callKey = (sessionID: string, callID: string) => `${sessionID}\u0000${callID}`
      const hooks: PluginHooks = {
        ...(has("PreToolUse") && {
          "tool.before": async (input, output) => {
            approved.delete(callKey(input.sessionID, input.callID))
            const name = toolName(input.tool)
            const decision = preToolUse(
              await run("PreToolUse", name, {
                session_id: input.sessionID,
                tool_name: name,
                tool_input: claudeInput(input.tool, output.args, ctx.directory),
                tool_use_id: input.callID
              })
            )
            for (const update of decision.updates) output.args = applyUpdatedInput(input.tool, output.args, update)
            if (decision.deny !== undefined) output.block = decision.deny
            else if (decision.allow) approved.add(callKey(input.sessionID, input.callID))
          },
          "permission.ask": (input, output) => {
            // The repeated-call guard asks before PreToolUse runs: it is never a hook's to answer.
            if (input.callID === undefined || input.permission === "doom_loop") return
            if (!approved.has(callKey(input.sessionID, input.callID))) return
            output.status = "allow"
            output.message = "approved by a PreToolUse hook"
          }
        }),
        ...((has("PreToolUse") || has("PostToolUse")) && {
          "tool.after": async (input, output) => {
            approved.delete(callKey(input.sessionID, input.callID))
            if (!has("PostToolUse")) return
            const name = toolName(input.tool)
            const notes = postToolUse(
              await run("PostToolUse", name, {
                session_id: input.sessionID,
                tool_name: name,
                tool_input: claudeInput(input.tool, input.args, ctx.directory),
                tool_response: { output: output.output, title: output.title, metadata: output.metadata },
                tool_use_id: input.callID
              })
            )
            if (notes.length > 0) output.output = `${output.output}\n\nPostToolUse hook feedback:\n${notes.join("\n")}`
          }
        }),
        ...(has("UserPromptSubmit") && {
          "prompt.submit": async (input, output) => {
            if (input.parentID !== undefined) return // a subagent's task, not the person's prompt
            const decision = promptSubmit(
              await run("UserPromptSubmit", undefined, { session_id: input.sessionID, prompt: input.text })
            )
            if (decision.block !== undefined) output.block = decision.block
            else output.context.push(...decision.context)
          }
        }),
        ...(has("SessionStart") && {
          "session.start": async (input, output) => {
            if (input.parentID !== undefined) return
            const decision = sessionStart(
              await run("SessionStart", input.source, { session_id: input.sessionID, source: input.source })
            )
            for (const notice of decision.notices) ctx.log.warn(`SessionStart hook: ${notice}`)
            output.context.push(...decision.context)
          }
        }),
        ...((has("Stop") || has("SubagentStop")) && {
          "turn.stop": async (input, output) => {
            const event = input.parentID === undefined ? "Stop" : "SubagentStop"
            const reason = stop(
              await run(event, undefined, { session_id: input.sessionID, stop_hook_active: input.continued > 0 })
            )
            if (reason !== undefined) output.continue = `${event} hook feedback:\n${reason}`
          }
        }),
        ...(has("Notification") && {
          event: async ({ event }) => {
            const note = notification(event)
            if (note === undefined || !("sessionID" in event)) return
            // A subagent's child session going idle is not Lathe waiting for the person.
            if (event.type === "session.idle") {
              const session = await ctx.client.sessions.get(event.sessionID).catch(() => undefined)
              if (session?.parentID !== undefined) return
            }
            await run(
              "Notification",
              note.type,
              { session_id: event.sessionID, message: note.message, notification_type: note.type },
              false
            )
          }
        })
      }
      return hooks
    }
  })

/** The plugin, as the CLI loads it. */
export default createHooksPlugin()
