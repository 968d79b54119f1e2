import type { McpOAuthProvider, OAuthProviderOptions } from "./oauth-provider.js"

/**
 * `createOAuthProvider`, with the OAuth module (the provider, its token store and its schemas) loaded on the first
 * call: what a host passes as the plugin's `authProvider`, so a run whose servers need no sign-in never loads it.
 * Rejects with what `createOAuthProvider` throws (`McpAuthError`, reason `"config"`).
 */
export const loadOAuthProvider = async (options: OAuthProviderOptions): Promise<McpOAuthProvider> =>
  (await import("./oauth-provider.js")).createOAuthProvider(options)
