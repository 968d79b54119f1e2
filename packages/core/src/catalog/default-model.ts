import type { CatalogModel } from "./catalog-index.js"

/**
 * Words that mark a model as not a provider's flagship: smaller or cheaper tiers (`mini`, `nano`, `lite`), previews
 * and experiments, and models made for something other than an agent's turns (images, audio, realtime voice, search,
 * safety classifiers, chat-only aliases, a provider's tool-specific twins). Matched as whole parts of the id (between
 * `-`, `.`, `/`, `:`, `@` or `_`).
 */
const NOT_FLAGSHIP =
  /(^|[-./:@_])(mini|nano|lite|preview|exp|experimental|image|audio|realtime|tts|transcribe|search|safeguard|embedding|chat|customtools|spark|non-reasoning|free|fast|turbo|highspeed)($|[-./:@_])/i

/** A moving alias (`devstral-latest`): it wins over its dated twins when both are as new. */
const LATEST = /-latest$/

/**
 * The default model of a provider, from its catalogue models, by rule (so a new release becomes the default when the
 * catalogue lists it, with no change to Lathe):
 * 1. the candidates are the models that call tools (an agent needs them) and whose id matches `family` when given
 *    (the provider's flagship coding family, `/^claude-sonnet-/`);
 * 2. of those, the ones no `NOT_FLAGSHIP` word marks — unless none is left, then all candidates (a provider that
 *    has only previews);
 * 3. the newest release date wins; on the same date a `-latest` alias, then the shortest id (`gpt-5.5` over
 *    `gpt-5.5-pro`, `claude-sonnet-4-5` over `claude-sonnet-4-5-20250929`), then the first in id order.
 * `undefined` when no model calls tools (or none matches `family`).
 */
export const flagshipModel = (models: ReadonlyArray<CatalogModel>, family?: RegExp): string | undefined => {
  const candidates = models.filter(
    (model) => model.entry.capabilities.toolCall && (family === undefined || family.test(model.modelID))
  )
  const flagships = candidates.filter((model) => !NOT_FLAGSHIP.test(model.modelID))
  let best: CatalogModel | undefined
  for (const model of flagships.length > 0 ? flagships : candidates)
    if (best === undefined || newer(model, best)) best = model
  return best?.modelID
}

/** Whether `a` beats `b` by rule 3 of `flagshipModel`. */
const newer = (a: CatalogModel, b: CatalogModel): boolean => {
  const [dateA, dateB] = [a.releaseDate ?? "", b.releaseDate ?? ""]
  if (dateA !== dateB) return dateA > dateB
  const [latestA, latestB] = [LATEST.test(a.modelID), LATEST.test(b.modelID)]
  if (latestA !== latestB) return latestA
  if (a.modelID.length !== b.modelID.length) return a.modelID.length < b.modelID.length
  return a.modelID < b.modelID
}
