/** A piece of a prompt as a person gives it (or a plugin's command or resource contributes it). */
export type PromptPart =
  /** `synthetic` text is context Lathe added for the person (an attached file's contents); UIs do not show it. */
  | { readonly type: "text"; readonly text: string; readonly synthetic?: boolean }
  | { readonly type: "file"; readonly url: string; readonly mime: string; readonly filename?: string }
