/**
 * The config snippets the tools print in their advice (bash's notices and sandbox refusals, webfetch's private-host
 * refusal, `lathe doctor`'s sandbox line), as data for the kit's `renderSnippet`: the `sandbox` and `webfetch` sections
 * are the tools' settings. The host's own snippets are core's `configAdvice`; the CLI's test loads each of these through
 * the real config loader (examples: {@link toolsConfigAdviceExamples}) and checks it does what the advice says.
 */

/** The builders of every snippet the tools print. */
export const toolsConfigAdvice = {
  /** Lets webfetch reach `host` (`host` or `host:port`) on this machine or a private network. */
  webfetchPrivateHost: (host: string) => ({ webfetch: { allow_private_hosts: [host] } }),
  /** Refuses bash where no sandbox can run, instead of running it under the permission rules alone. */
  sandboxRequired: () => ({ sandbox: "required" as const }),
  /** Opens sandboxed commands' network: all of it (`true`), or the listed hosts through Lathe's proxy. */
  sandboxNetwork: (network: true | ReadonlyArray<string>) => ({
    sandbox: { network: network === true ? (true as const) : [...network] }
  })
} as const

/** The name of one of the tools' snippet builders. */
export type ToolsConfigAdviceName = keyof typeof toolsConfigAdvice

/** One example of every snippet, for the test that loads each through the config loader (a new builder needs one). */
export const toolsConfigAdviceExamples: {
  readonly [K in ToolsConfigAdviceName]: ReadonlyArray<ReturnType<(typeof toolsConfigAdvice)[K]>>
} = {
  webfetchPrivateHost: [toolsConfigAdvice.webfetchPrivateHost("127.0.0.1:8080")],
  sandboxRequired: [toolsConfigAdvice.sandboxRequired()],
  sandboxNetwork: [
    toolsConfigAdvice.sandboxNetwork(true),
    toolsConfigAdvice.sandboxNetwork(["registry.npmjs.org", "*.github.com", "127.0.0.1:8080"])
  ]
}
