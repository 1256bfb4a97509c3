/** computer_observe and computer_act (TOOL-1..3): the bot's screen as images and batched input. */
import type { AgentToolResult } from "@mariozechner/pi-agent-core";
import type { DesktopAction } from "@rakazo/sandbox";
import { actOnDesktop, describeDesktopAction, type ObserveResult, observeDesktop } from "@rakazo/services";
import { fence, type ToolState } from "../session.ts";
import { defineTool, mutate, type ToolFactory, text } from "./common.ts";

function frameMeta(frame: ObserveResult): string {
  return `screen ${frame.width}x${frame.height}, frame ${frame.frameHash.slice(0, 12)}`;
}

/** The screenshot as an image tool result, or metadata only when the model already has it (TOOL-2). */
function frameResult(state: ToolState, frame: ObserveResult, prefix: string): AgentToolResult<unknown> {
  const details = {
    width: frame.width,
    height: frame.height,
    frameHash: frame.frameHash,
    imageOmitted: false,
  };
  if (!state.frames.shouldSendImage(frame.frameHash)) {
    return text(
      `${prefix}${frameMeta(frame)}. The screen is unchanged: the previous screenshot remains valid.`,
      {
        ...details,
        imageOmitted: true,
      },
    );
  }
  return {
    content: [
      { type: "text", text: `${prefix}${frameMeta(frame)}` },
      { type: "image", data: frame.pngBase64, mimeType: "image/png" },
    ],
    details,
  };
}

export const computerObserve: ToolFactory = (session, state) =>
  defineTool(
    "computer_observe",
    "Look at the screen",
    "Take a screenshot of your own desktop. If nothing changed since your last screenshot you get " +
      "only a note that it remains valid. Prefer browser_snapshot for web pages: it is cheaper and exact.",
    async () => {
      const frame = await observeDesktop(session.ctx, session.caller, fence(session));
      return frameResult(state, frame, "");
    },
  );

export const computerAct: ToolFactory = (session, state) =>
  defineTool(
    "computer_act",
    "Use mouse and keyboard",
    (session.model.vision
      ? "Run mouse and keyboard actions on your desktop, in order, then get the resulting screenshot. "
      : "Run keyboard (and mouse) actions on your desktop, in order. You cannot see the screen: " +
        "prefer browser_snapshot/browser_act for web pages, and call request_takeover when a page " +
        "cannot be operated through them. ") +
      "Coordinates are screen pixels. Batch the steps of one intention (click a field, type, press Return). " +
      "Repeating an action that does not change the screen is refused after two tries.",
    async ({ actions }) => {
      const list = actions as DesktopAction[];
      const refusal = state.frames.refusal(list);
      if (refusal) throw new Error(refusal);
      return mutate(
        session,
        "computer_act",
        { actions: list },
        async () => {
          const before =
            state.frames.currentHash ??
            (await observeDesktop(session.ctx, session.caller, fence(session))).frameHash;
          const result = await actOnDesktop(session.ctx, session.caller, {
            ...fence(session),
            actions: list,
          });
          const frame = await observeDesktop(session.ctx, session.caller, fence(session));
          state.frames.recordAct(list, before, frame.frameHash);
          const status = result.error
            ? `Stopped at action ${result.error.index + 1} of ${result.total} (${result.error.code}: ${result.error.message}); ` +
              `actions before it completed. `
            : `Completed ${result.completed} of ${result.total} actions. `;
          const unchanged = before === frame.frameHash ? "The screen did not change. " : "";
          const value = session.model.vision
            ? frameResult(state, frame, `${status}${unchanged}`)
            : text(`${status}${unchanged}`, { frameHash: frame.frameHash });
          return {
            value,
            activity: {
              line: `computer_act ${list.map(describeDesktopAction).join(", ")} (${result.completed}/${result.total})`,
              ok: !result.error,
              details: { completed: result.completed, total: result.total },
            },
          };
        },
        () => ({ line: `computer_act ${list.map(describeDesktopAction).join(", ")}` }),
      );
    },
  );
