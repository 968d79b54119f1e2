/**
 * @lathe/permission: the real `PermissionNext` layer (rules, asks, remembered approvals, audit trail) and the
 * pure evaluation functions the CLI and agents share.
 */
export * from "./approvals.js"
export * from "./audit.js"
export * from "./bash.js"
export * from "./checks.js"
export * from "./describe.js"
export * from "./permission-live.js"
export * from "./ruleset.js"
export * from "./wildcard.js"
