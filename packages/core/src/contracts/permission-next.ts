import { type PermissionError, type PermissionRequest, type Ruleset, rejected } from "@lathe/plugin"
import type { ToolPermission } from "@lathe/plugin/schema"
import { Context, Effect, Layer } from "effect"

/**
 * The rules every ruleset starts with: the host's defaults (`defaults()` of `@lathe/permission` in the CLI). The loop
 * puts them first, so agent rules, the user's config and remembered approvals come after and win. Empty by default.
 */
export const PermissionDefaults = Context.Reference<Ruleset>("@lathe/core/PermissionDefaults", {
  defaultValue: () => []
})

/** A request as the service receives it: who asks, under which ruleset. */
export interface PermissionAsk extends PermissionRequest {
  readonly sessionID: string
  readonly messageID?: string
  readonly callID?: string
  /** The effective ruleset for this ask (defaults, agent, user config, session), in order. */
  readonly ruleset: Ruleset
  /**
   * Rulesets that must also allow: a subagent's asks carry its parents' rulesets, so it can never do what a parent
   * could not. Each check takes the strictest verdict (deny, then ask, then allow) over `ruleset` and these.
   */
  readonly constraints?: ReadonlyArray<Ruleset>
  /** Aborting cancels a pending ask with `PermissionRejected`; nothing waits forever. */
  readonly signal?: AbortSignal
  /**
   * Told what decided the ask (the rule, the person's reply, a flag, a hook, a default) before it succeeds or fails:
   * the tool runner records it on the call's part.
   */
  readonly onDecided?: (decision: ToolPermission) => void
}

/** How a person answered an ask. */
export type PermissionReply =
  | { readonly type: "once"; readonly by?: ReplySource }
  | { readonly type: "always"; readonly by?: ReplySource }
  | { readonly type: "reject"; readonly message?: string; readonly by?: ReplySource }

/** Who answered: the person (default), or a blanket `--yes`; recorded in the audit trail. */
export type ReplySource = "person" | "yes"

/** A pending ask, as a UI lists it. */
export interface PendingAsk extends PermissionRequest {
  readonly id: string
  readonly sessionID: string
  readonly callID?: string
}

/**
 * The permission service: evaluate rules, ask and wait for a reply, remember "always" answers.
 * The real layer lives in `@lathe/permission`; core ships `allowAll` and `denyAll` for tests.
 */
export class PermissionNext extends Context.Service<
  PermissionNext,
  {
    /** Decides an ask: succeeds when allowed (by rule, hook, remembered approval or reply), fails otherwise. */
    readonly ask: (request: PermissionAsk) => Effect.Effect<void, PermissionError>
    /** Answers a pending ask by id. Unknown ids are ignored. */
    readonly reply: (id: string, reply: PermissionReply) => Effect.Effect<void>
    /** The asks waiting for a reply. */
    readonly pending: Effect.Effect<ReadonlyArray<PendingAsk>>
  }
>()("@lathe/core/PermissionNext") {
  /** Allows every ask: for tests, and for `--yes`-style runs where deny rules are enforced elsewhere. */
  static readonly allowAll = Layer.succeed(
    PermissionNext,
    PermissionNext.of({ ask: () => Effect.void, reply: () => Effect.void, pending: Effect.succeed([]) })
  )

  /** Rejects every ask, as a person who says no to everything would. */
  static readonly denyAll = Layer.succeed(
    PermissionNext,
    PermissionNext.of({
      ask: (request) => Effect.fail(rejected(request.permission, request.patterns)),
      reply: () => Effect.void,
      pending: Effect.succeed([])
    })
  )
}
