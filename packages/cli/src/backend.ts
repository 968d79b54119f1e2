import type { OutputSchema, Plugins, ReplySource, SessionTurn } from "@lathe/core"
import type { ReasoningLevel } from "@lathe/core/providers"
import type { AgentInfo } from "@lathe/plugin"
import type { AssistantMessage, LatheEvent, MessageWithParts, PromptPart, Session } from "@lathe/plugin/schema"
import type { SessionDocument } from "./session-document.js"

/**
 * A backend call's result: the value, or a failure as a message written for the person (with the typed error behind
 * it, when the backend has one: the in-process agent's).
 */
export type Outcome<A> =
  | { readonly ok: true; readonly value: A }
  | { readonly ok: false; readonly message: string; readonly error?: unknown }

/** How far `/undo` goes (as `lathe undo`'s options), and whether `/undo` and `/redo` overwrite files changed since. */
export interface RevertOptions {
  readonly step?: boolean
  readonly turn?: number
  readonly force?: boolean
}

/** What an undo or redo put back, and which of those files had changed since (overwritten by `force`). */
export interface RevertDone {
  readonly files: ReadonlyArray<string>
  readonly overwritten: ReadonlyArray<string>
}

/** What the interactive UI may do only with an in-process agent (a server's API has no route for these). */
export type LocalFeature =
  | "shell"
  | "compact"
  | "models"
  | "mcp"
  | "binary-attachments"
  | "trust"
  | "connect"
  | "variant"

/** An agent as the UI needs it: for the Tab cycle, `@agent` prompts and the agent's own model. */
export type BackendAgent = Pick<AgentInfo, "name" | "mode" | "hidden" | "model">

/** What the UI learns once, at start. */
export interface BackendSetup {
  /** The folder `@file` mentions, `!cmd` and custom commands work in. */
  readonly root: string
  readonly agents: ReadonlyArray<BackendAgent>
  /** The configured default primary agent, if any. */
  readonly defaultAgent: string | undefined
  /** Warnings about the configuration, shown once. */
  readonly notices: ReadonlyArray<string>
  /** Set in an untrusted folder whose config was narrowed: what it would grant if trusted. */
  readonly trustPrompt: ReadonlyArray<string> | undefined
  /** Where the prompt history is kept; undefined keeps it for this run only. */
  readonly history: { readonly dataDir: string; readonly projectID: string } | undefined
  /** The user's config folder (for custom commands); undefined when they are not available. */
  readonly configDir: string | undefined
  /**
   * Every notice of the configuration as loaded, those the trust prompt covers included, for a front-end with no
   * trust prompt (`lathe run`); absent when the configuration is not read here (a server's).
   */
  readonly configNotices?: ReadonlyArray<string>
  /** The config's cost caps (`budget`), for the budget left in the status line; absent when none is set here. */
  readonly budget?: { readonly maxCost?: number; readonly maxSessionCost?: number }
  /** Whether the project's config was read as untrusted (narrowed); absent when it is not read here. */
  readonly untrusted?: boolean
  /**
   * Whether the person trusts `root` (`lathe trust`), for the custom commands read here: an untrusted folder's run with
   * the person's agent and model. Absent counts as untrusted.
   */
  readonly trusted?: boolean
}

/** What a turn may spend and take, and the shape of its answer (`lathe run`'s flags). */
export interface TurnLimits {
  /** USD the turn and its subagents may spend together. */
  readonly maxCost?: number
  /** Model calls the turn may make. */
  readonly maxSteps?: number
  /** The JSON Schema the final answer must validate against. */
  readonly outputSchema?: OutputSchema
}

/** One prompt to run in a session. */
export interface BackendPrompt {
  readonly sessionID: string
  /** What the person typed. */
  readonly text: string
  /** Every part of the prompt: `text` first, then attachments and context the person does not see as theirs. */
  readonly parts: ReadonlyArray<PromptPart>
  /** The agent to run; undefined: the session's own. */
  readonly agent: string | undefined
  readonly model: string | undefined
  /** How hard a reasoning model thinks for this prompt (`/variant`); unset: the agent's or the model's setting. */
  readonly variant?: ReasoningLevel
  /** The turn's limits (`lathe run --max-cost`, `--max-steps`, `--output-schema`); in-process only. */
  readonly limits?: TurnLimits
  /** Set when the prompt addresses a subagent directly (`@agent …`). */
  readonly allowSubagents: boolean
  /** The model a directly addressed subagent with no model of its own runs on (the caller's); in-process only. */
  readonly inheritedModel?: string
  /** `false`: the first prompt does not name the session (no model call for a title); in-process only. */
  readonly title?: boolean
  /**
   * A plugin command (an MCP server's prompt, a command file's, any plugin's) expanded where the agent runs, as
   * `lathe run --command` names it; `text` is then its arguments as typed, and `parts` are not sent.
   */
  readonly command?: string
  /** The command's arguments (default: `text` split like a shell). */
  readonly arguments?: ReadonlyArray<string>
  /**
   * The agent's side makes `text` the prompt (`lathe run`): the resources its `@<uri>` mentions name are attached,
   * and, in-process, a leading `@subagent` takes it. Unset: `parts` are the prompt as they are (the UI made them).
   */
  readonly expand?: boolean
  /** Told what could not go with the prompt (a mentioned resource that cannot be read), before the turn runs. */
  readonly onNotice?: (text: string) => void
  /** Aborting it ends the turn. */
  readonly signal: AbortSignal
}

/** A stored session with its history and its subagents' sessions (by child session ID). */
export interface LoadedSession {
  readonly session: Session
  readonly messages: ReadonlyArray<MessageWithParts>
  readonly children: ReadonlyMap<string, ReadonlyArray<MessageWithParts>>
}

/** How a turn ended: its last answer (an `error` on it says why it stopped short), or the session's error. */
export interface TurnEnd {
  /** The turn's last assistant message; undefined when none was seen (a server whose stream ended early). */
  readonly answer: AssistantMessage | undefined
  /** The message of a `session.error` the turn ended with, if any. */
  readonly error?: string | undefined
}

/** A model the UI runs with: its label and context window (0 when unknown). */
export interface ResolvedModel {
  readonly label: string
  readonly contextLimit: number
  /** Whether the model takes images and PDFs (`lathe run -f`); absent when the backend does not know. */
  readonly takes?: { readonly image: boolean; readonly pdf: boolean }
}

/** How the backend tells the UI about things it did not ask for. */
export interface BackendHooks {
  /** Every event of the session(s) in view, in order. */
  readonly onEvent: (event: LatheEvent) => void
  /** A warning to show (a log line of the services, a dropped event stream). */
  readonly onWarning: (title: string, text: string) => void
}

/**
 * Everything the interactive UI needs from the agent, whether it runs in this process (`LocalBackend`) or behind a
 * `lathe serve` server (`RemoteBackend`). The controller owns the UI state (transcript, queue, notes) and calls only
 * this. No method throws: failures come back as `Outcome` messages; events come through `BackendHooks.onEvent`.
 */
export interface Backend {
  /** `host:port` of the server when attached; undefined for the in-process agent. */
  readonly attached: string | undefined
  /** Whether a prompt sent while a turn runs goes straight to the agent (the server queues it) rather than waiting. */
  readonly queuesPrompts: boolean
  /** Whether `feature` works with this backend. */
  supports(feature: LocalFeature): boolean
  setup(): Promise<Outcome<BackendSetup>>
  /** Creates a session for `agent` (undefined: the configured default). */
  createSession(agent: string | undefined): Promise<Outcome<Session>>
  /**
   * Deletes `sessionID` if nothing is stored in it yet (the UI made it for a prompt that failed before it was
   * stored: no model, an unknown agent); true when it did.
   */
  discardIfEmpty(sessionID: string): Promise<boolean>
  /**
   * Runs one prompt; resolves when the turn (and, on a server, the turns it queued behind) has ended, with how it
   * ended when the backend knows.
   */
  prompt(input: BackendPrompt): Promise<Outcome<TurnEnd | undefined>>
  /**
   * Answers a permission ask; `by: "yes"` records a blanket `--yes` rather than the person (a server records every
   * reply over HTTP as the person's).
   */
  replyPermission(
    id: string,
    reply: "once" | "always" | "reject",
    message: string | undefined,
    by?: ReplySource
  ): Promise<Outcome<void>>
  /**
   * Answers a question (one list of answers per question), or dismisses it when `answers` is undefined, telling the
   * model `reason` (default: the person dismissed it).
   */
  replyQuestion(
    id: string,
    answers: ReadonlyArray<ReadonlyArray<string>> | undefined,
    reason?: string
  ): Promise<Outcome<void>>
  /**
   * Undoes the session's last turn (or `options.step`, or back to before `options.turn`) or redoes what undo took;
   * files changed since fail with a message naming them unless `options.force`.
   */
  revert(verb: "undo" | "redo", sessionID: string, options?: RevertOptions): Promise<Outcome<RevertDone>>
  /** The session's turns, oldest first (for `/undo --list`). */
  turns(sessionID: string): Promise<Outcome<ReadonlyArray<SessionTurn>>>
  /** Top-level sessions, newest first. */
  sessions(): Promise<ReadonlyArray<Session>>
  /** Loads a session by ID, or the most recent one; undefined when there is none. */
  load(id: string | undefined): Promise<Outcome<LoadedSession | undefined>>
  /** Models to offer in the picker (empty when the backend cannot list them). */
  models(): Promise<ReadonlyArray<string>>
  /** Resolves `model` (undefined: the agent's or the default) to its label and context window. */
  resolveModel(model: string | undefined, agent: string): Promise<Outcome<ResolvedModel>>
  /** Summarises older history (only when `supports("compact")`). */
  compact(sessionID: string, model: string | undefined, signal: AbortSignal): Promise<Outcome<void>>
  /** Trusts the project (only when `supports("trust")`); its config (plugins, MCP, providers) applies from then on. */
  trust(): Promise<Outcome<void>>
  /** Rebuilds the agent's services from the config files as they are now (only when `supports("connect")`). */
  reload(): Promise<Outcome<void>>
  /** Records that the person declined to trust the project, so the UI does not offer it again there. */
  decline(): Promise<Outcome<void>>
  /**
   * The stored session as `lathe export` reads it (with subagent sessions and permission decisions), for `/export`;
   * absent when the backend cannot read the store (the UI then exports what it has shown).
   */
  document?(sessionID: string): Promise<Outcome<SessionDocument>>
  /**
   * The plugin host of the agent's services as they are now (rebuilt by `trust` and `reload`), for its commands and
   * resources; absent when the plugins run elsewhere (a server).
   */
  plugins?(): Promise<Outcome<Plugins["Service"]>>
  /**
   * Asks whether `agent` may read `paths` (absolute) in this session, as the `read` tool asks (`external_directory`
   * outside the project, then `read`): fails with the permission error where a read would be refused. Absent when the
   * rules are not here (a server's).
   */
  mayRead?(sessionID: string, agent: string | undefined, paths: ReadonlyArray<string>): Promise<Outcome<void>>
  /** Stops what the backend started (services, event streams). */
  dispose(): Promise<void>
}

/** Builds a backend that reports to `hooks`. */
export type BackendFactory = (hooks: BackendHooks) => Backend | Promise<Backend>

/** The one line the UI shows for a feature an attached session cannot use. */
export const notAvailableWhenAttached = (feature: string): string =>
  `${feature} is not available when attached to a server (it needs the agent in this process); run lathe without --attach to use it.`
