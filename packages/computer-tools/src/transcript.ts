/**
 * Writes a run's transcript from its Pi session's events: the model's text, each tool call (name,
 * arguments, the text it returned, whether it failed, how long it took, a thumbnail of an
 * observed frame), the model's errors and the run's status changes. Events are appended in the
 * order they happened (one chain per run); redaction and caps happen where they are stored
 * (services, runs/transcript.ts).
 */
import type { Agent } from "@mariozechner/pi-agent-core";
import {
  appendRunEvent,
  type RunEventInput,
  type ServiceContext,
  TRANSCRIPT_THUMBNAIL_BYTES,
} from "./services-internal.ts";
import { thumbnailOf } from "./thumbnail.ts";

export interface TranscriptRecorder {
  /** A status change of the run (started, waiting for a person, resumed, finished). */
  status(status: string, details?: Record<string, unknown>): void;
  /** Resolves once every event so far is stored. */
  flush(): Promise<void>;
  /** Stops listening to the session. */
  stop(): void;
}

interface ContentPart {
  readonly type: string;
  readonly text?: string;
  readonly data?: string;
  readonly mimeType?: string;
}

export function recordTranscript(
  ctx: Pick<ServiceContext, "db" | "log">,
  agent: Agent,
  run: { runId: string; computerId: string },
): TranscriptRecorder {
  let chain = Promise.resolve();
  const append = (type: RunEventInput["type"], payload: Record<string, unknown>, thumbnail?: Uint8Array) => {
    const event: RunEventInput = { ...run, type, payload, ...(thumbnail ? { thumbnail } : {}) };
    chain = chain.then(async () => {
      await appendRunEvent(ctx, event);
    });
  };
  const started = new Map<string, { at: number; args: unknown }>();
  const unsubscribe = agent.subscribe((event) => {
    if (event.type === "tool_execution_start") {
      started.set(event.toolCallId, { at: Date.now(), args: event.args });
    }
    if (event.type === "tool_execution_end") {
      const begun = started.get(event.toolCallId);
      started.delete(event.toolCallId);
      const content = ((event.result as { content?: ContentPart[] } | undefined)?.content ??
        []) as ContentPart[];
      const image = content.find((c) => c.type === "image" && c.mimeType === "image/png" && c.data);
      const thumbnail = image?.data
        ? thumbnailOf(Buffer.from(image.data, "base64"), TRANSCRIPT_THUMBNAIL_BYTES)
        : undefined;
      append(
        "tool",
        {
          tool: event.toolName,
          args: begun?.args ?? null,
          ok: !event.isError,
          result: content
            .filter((c) => c.type === "text")
            .map((c) => c.text ?? "")
            .join("\n"),
          durationMs: begun === undefined ? null : Date.now() - begun.at,
          observed: image !== undefined,
        },
        thumbnail,
      );
    }
    if (event.type === "message_end" && event.message.role === "assistant") {
      const message = event.message;
      const text = message.content
        .filter((c) => c.type === "text")
        .map((c) => (c as { text: string }).text)
        .join("\n")
        .trim();
      if (text !== "") append("text", { text });
      if (message.stopReason === "error" || message.stopReason === "aborted") {
        append("error", { message: message.errorMessage ?? message.stopReason });
      }
    }
  });
  return {
    status: (status, details = {}) => append("status", { status, ...details }),
    flush: () => chain,
    stop: unsubscribe,
  };
}
