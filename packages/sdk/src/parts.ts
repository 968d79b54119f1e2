/**
 * The message model's part types, for a client reading `GET /sessions/:id/messages` or `part.updated` events: tell a
 * subagent call (`SubtaskPart`, with `childSessionID` and `status`) or an `@agent` mention (`AgentPart`) by `type`,
 * and read a step's files and lines changed from its `PatchPart`'s `summary`.
 */
export type {
  AgentPart,
  CompactionPart,
  FilePart,
  MessageWithParts,
  Part,
  PartType,
  PatchPart,
  ReasoningPart,
  RetryPart,
  StepFileChange,
  StepFinishPart,
  StepStartPart,
  StepSummary,
  SubtaskPart,
  TextPart,
  ToolPart,
  ToolState
} from "@lathe/plugin/schema"
