import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { McpConnection } from "../src/connection.js"
import {
  listPrompts,
  type McpPrompt,
  McpRequestError,
  promptArguments,
  promptText,
  runPrompt,
  splitWords
} from "../src/prompts.js"
import { everythingBin, nodeServer } from "./helpers.js"

const prompt = (args: McpPrompt["arguments"]): McpPrompt => ({
  server: "srv",
  name: "p",
  command: "srv:p",
  description: "",
  arguments: args
})

describe("prompt arguments", () => {
  const two = prompt([
    { name: "city", required: true },
    { name: "state", required: false }
  ])

  it("splits words like a shell, quotes grouping", () => {
    expect(splitWords(`"New York" state='N Y' x`)).toEqual(["New York", "state=N Y", "x"])
    expect(splitWords("   ")).toEqual([])
  })

  it("key=value names an argument; other words fill the rest in order, the last taking what remains", () => {
    expect(promptArguments(two, ["state=NY", "New", "York"])).toEqual({ state: "NY", city: "New York" })
    expect(promptArguments(two, ["Paris", "Ile", "de", "France"])).toEqual({ city: "Paris", state: "Ile de France" })
    expect(promptArguments(two, ["Paris"])).toEqual({ city: "Paris" })
  })

  it("an unknown name, a missing required argument and words a prompt cannot take are clear errors", () => {
    expect(() => promptArguments(two, ["town=Paris"])).toThrow(/has no argument "town".*city \[state\]/)
    expect(() => promptArguments(two, ["state=NY"])).toThrow(/srv:p needs city/)
    expect(() => promptArguments(prompt([]), ["hello"])).toThrow(
      /Too many arguments: "hello". srv:p takes no arguments/
    )
  })

  it("messages become one user prompt: roles labelled only when the assistant speaks; binary content noted", () => {
    expect(
      promptText({
        messages: [
          { role: "user", content: { type: "text", text: "a" } },
          { role: "user", content: { type: "image", data: "AAAA", mimeType: "image/png" } }
        ]
      })
    ).toBe("a\n\n[image image/png, 3 bytes: not attached]")
    expect(
      promptText({
        messages: [
          { role: "user", content: { type: "text", text: "q" } },
          { role: "assistant", content: { type: "text", text: "r" } }
        ]
      })
    ).toBe("User: q\n\nAssistant: r")
  })
})

describe("prompts of server-everything over stdio", () => {
  const connection = new McpConnection(nodeServer("everything", [everythingBin, "stdio"]))
  const connections = [connection]

  beforeAll(async () => {
    expect(await connection.start()).toMatchObject({ state: "connected" })
  })
  afterAll(() => connection.close())

  it("lists each prompt as <server>:<prompt> with its description and arguments", async () => {
    const { prompts, problems } = await listPrompts(connections)
    expect(problems).toEqual([])
    expect(prompts.map((p) => p.command)).toEqual(
      expect.arrayContaining(["everything:simple-prompt", "everything:args-prompt", "everything:resource-prompt"])
    )
    expect(prompts.find((p) => p.name === "args-prompt")).toMatchObject({
      description: "A prompt with two arguments, one required and one optional",
      arguments: [
        { name: "city", required: true },
        { name: "state", required: false }
      ]
    })
  })

  it("a simple prompt expands to its text", async () => {
    expect(await runPrompt(connections, "everything:simple-prompt")).toBe("This is a simple prompt without arguments.")
  })

  it("a prompt with arguments takes them by name or in order", async () => {
    expect(await runPrompt(connections, "everything:args-prompt", ["state=IL", "Chicago"])).toBe(
      "What's weather in Chicago, IL?"
    )
    expect(await runPrompt(connections, "everything:args-prompt", splitWords('"San Francisco"'))).toBe(
      "What's weather in San Francisco?"
    )
  })

  it("an embedded text resource becomes text; a binary one a note", async () => {
    const text = await runPrompt(connections, "everything:resource-prompt", ["Text", "2"])
    expect(text).toContain("Please analyze the following resource:")
    expect(text).toMatch(/Resource demo:\/\/resource\/dynamic\/text\/2:\nResource 2: This is a plaintext resource/)
    const blob = await runPrompt(connections, "everything:resource-prompt", ["resourceType=Blob", "resourceId=1"])
    expect(blob).toMatch(/\[resource demo:\/\/resource\/dynamic\/blob\/1 \(.+\), \d+ bytes: not attached\]/)
  })

  it("unknown server, unknown prompt, a refused argument and a bad name say what to do", async () => {
    await expect(runPrompt(connections, "nosuch:x")).rejects.toThrow(/no MCP server named "nosuch"; .* everything/)
    await expect(runPrompt(connections, "everything:nope")).rejects.toThrow(
      /has no prompt "nope"; its prompts are .*simple-prompt/
    )
    await expect(runPrompt(connections, "everything:resource-prompt", ["Video", "1"])).rejects.toThrow(
      /refused the prompt everything:resource-prompt: .*Invalid resourceType/
    )
    await expect(runPrompt(connections, "simple-prompt")).rejects.toBeInstanceOf(McpRequestError)
  })

  it("a server that is not connected is named with its state", async () => {
    const down = new McpConnection(nodeServer("down", [everythingBin, "stdio"], { enabled: false }))
    await expect(runPrompt([down], "down:simple-prompt")).rejects.toThrow(/"down" is not available \(disabled\)/)
    expect((await listPrompts([down])).prompts).toEqual([])
  })
})
