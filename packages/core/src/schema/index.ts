/**
 * @lathe/core/schema: the message model and the event catalogue, as the author kit defines them
 * (`@lathe/plugin/schema`), kept at this address for clients that already import it. New code imports the kit's entry.
 */
export * from "@lathe/plugin/schema"
