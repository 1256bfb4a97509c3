/**
 * The offline twin's model: a scripted Pi model (pi-ai's faux provider, no inference) that does
 * what VER-3 asks of a real one, reading each step from the previous tool result as a model
 * would — the button's position from the screenshot's pixels, the marker from the shell's
 * output. It retries a screenshot that does not show the page yet (Chromium still painting).
 */
import {
  type AssistantMessage,
  type Context,
  type FauxResponseFactory,
  fauxAssistantMessage,
  fauxText,
  fauxToolCall,
} from "@mariozechner/pi-ai";
import { decodePng, findColour } from "./png.ts";

const call = (name: string, args: Record<string, unknown>): AssistantMessage =>
  fauxAssistantMessage(fauxToolCall(name, args), { stopReason: "toolUse" });

/** The button's magenta, with room for anti-aliasing at its edges. */
const isButton = (r: number, g: number, b: number) => r > 200 && g < 70 && b > 200;
/** A 360×180 button is ~65 000 pixels; far fewer means it is not (fully) on screen yet. */
const MIN_BUTTON_PIXELS = 20_000;
const MAX_LOOKS = 8;

function lastToolResult(context: Context) {
  const last = context.messages.at(-1);
  if (last?.role !== "toolResult") throw new Error("the scripted model expected a tool result");
  return last;
}

function textOf(context: Context): string {
  return lastToolResult(context)
    .content.map((c) => (c.type === "text" ? c.text : ""))
    .join("\n");
}

/** The newest screenshot the model was sent (an unchanged screen sends none). */
function latestScreenshot(context: Context): string | undefined {
  for (const message of [...context.messages].reverse()) {
    if (message.role !== "toolResult") continue;
    const image = message.content.find((c) => c.type === "image");
    if (image?.type === "image") return image.data;
  }
  return undefined;
}

export function scriptedComputerUser(options: { url: string; proofPath: string }): FauxResponseFactory[] {
  let phase: "navigate" | "look" | "click" | "shell" | "write" | "done" = "navigate";
  let looks = 0;
  const next: FauxResponseFactory = (context) => {
    switch (phase) {
      case "navigate":
        phase = "look";
        return call("browser_navigate", { url: options.url });
      case "look":
        phase = "click";
        return call("computer_observe", {});
      case "click": {
        const result = lastToolResult(context);
        if (result.isError) throw new Error(`the screenshot failed: ${textOf(context)}`);
        const png = latestScreenshot(context);
        const button = png ? findColour(decodePng(Buffer.from(png, "base64")), isButton) : undefined;
        if (!button || button.count < MIN_BUTTON_PIXELS) {
          looks += 1;
          if (looks >= MAX_LOOKS) throw new Error(`the button never showed on screen (${looks} looks)`);
          // Look again a moment later: computer_act answers with the screen after the wait.
          return call("computer_act", { actions: [{ type: "wait", ms: 1_000 }] });
        }
        phase = "shell";
        return call("computer_act", { actions: [{ type: "click", x: button.x, y: button.y }] });
      }
      case "shell":
        phase = "write";
        return call("shell", { command: "cat /tmp/rakazo-ver3/marker.txt" });
      case "write": {
        const stdout = /stdout:\n([\s\S]*?)(?:\nstderr:|$)/.exec(textOf(context))?.[1];
        if (!stdout?.startsWith("marker "))
          throw new Error(`no marker in the shell's output:\n${textOf(context)}`);
        phase = "done";
        return call("write_file", { path: options.proofPath, content: `${stdout.trim()}\n` });
      }
      case "done":
        return fauxAssistantMessage(fauxText("done"));
    }
  };
  // One factory per turn: navigate, look, up to MAX_LOOKS waits, click, shell, write, answer.
  return Array.from({ length: MAX_LOOKS + 6 }, () => next);
}
