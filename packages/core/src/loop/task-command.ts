import { Effect } from "effect"
import { UnknownCommand } from "../plugin-host/contributions.js"
import type { Plugins } from "../plugin-host/plugins.js"
import { splitCommandWords } from "./turn-input.js"

/**
 * A command expanded for a subagent's prompt (the task tool's `command`): the same expansion `/name args` gets in
 * the person's session, its text parts (the command's words and any context it adds) joined; files are left out (a
 * subagent's prompt is text). An unknown name fails naming the commands there are, so the model can pick one.
 */
export const expandTaskCommand = (plugins: Plugins["Service"], name: string, args: string) =>
  Effect.gen(function* () {
    const bare = name.replace(/^\//, "")
    const expansion = yield* plugins.runCommand(bare, splitCommandWords(args), args).pipe(
      Effect.catchTag("UnknownCommand", () =>
        Effect.flatMap(plugins.commands, (listed) =>
          Effect.fail(
            new UnknownCommand({
              name: bare,
              message:
                listed.length === 0
                  ? `No command "${bare}": there are no commands in this project.`
                  : `No command "${bare}". Available commands: ${listed.map((c) => c.name).join(", ")}.`
            })
          )
        )
      )
    )
    const text = expansion.parts
      .flatMap((part) => (part.type === "text" && part.text.trim() ? [part.text] : []))
      .join("\n\n")
    return { text, ...(expansion.agent !== undefined ? { agent: expansion.agent } : {}) }
  })
