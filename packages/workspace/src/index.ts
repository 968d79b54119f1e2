/**
 * @lathe/workspace: session work trees any runner can rebuild. `Workspaces` clones a session's repo at its base
 * commit and records its changes as numbered checkpoints in `WorkspaceLog` (in memory or Postgres);
 * `workspacePlugin` checkpoints after every tool call that may change files.
 */

export { emptyHash, hashPatch } from "./checkout.js"
export * from "./errors.js"
export { redact } from "./git.js"
export * from "./plugin.js"
export * from "./workspace-log.js"
export { MemoryWorkspaceLog } from "./workspace-log-memory.js"
export { migrations, SqlWorkspaceLog } from "./workspace-log-sql.js"
export * from "./workspaces.js"
