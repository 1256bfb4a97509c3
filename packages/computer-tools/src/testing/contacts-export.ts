/**
 * VER-2: the contacts-export replay through real Pi with a scripted model (pi-ai's faux
 * provider; no inference). Backend-neutral: the same script runs against any computer whose
 * tool session offers page tools — the fake computer now, real Docker Chromium later. Steps that
 * depend on the page (the export button's ref, the download's path, the CSV rows) are read from
 * the previous tool result, as a model would.
 */
import {
  type AssistantMessage,
  type Context,
  fauxAssistantMessage,
  fauxText,
  fauxToolCall,
  registerFauxProvider,
} from "@mariozechner/pi-ai";
import { type AgentTaskOutcome, runAgentTask } from "../agent-session.ts";
import type { ToolSession } from "../session.ts";

export const SUMMARY_PATH = "reports/contacts-summary.md";
const TASK = "Export the contacts from the contacts app as CSV, check the file, and write a short summary.";

function lastToolText(context: Context): string {
  const last = [...context.messages].reverse().find((m) => m.role === "toolResult");
  if (last?.role !== "toolResult") throw new Error("scenario expected a tool result");
  return last.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
}

function step(build: (text: string) => AssistantMessage) {
  return (context: Context) => build(lastToolText(context));
}

/** The summary the script writes for a CSV: what the test asserts the workspace holds. */
export function summaryFor(csv: string): string {
  const rows = csv
    .trim()
    .split("\n")
    .slice(1)
    .map((line) => line.split(",")[0]);
  return `# Contacts export\n\n${rows.length} contacts: ${rows.join(", ")}\n`;
}

export interface ScenarioResult extends AgentTaskOutcome {
  readonly downloadPath: string;
}

export async function runContactsExportScenario(options: {
  session: Omit<ToolSession, "model">;
  appUrl: string;
}): Promise<ScenarioResult> {
  const faux = registerFauxProvider({ models: [{ id: "scripted-contacts", input: ["text", "image"] }] });
  let downloadPath = "";
  faux.setResponses([
    fauxAssistantMessage(fauxToolCall("browser_navigate", { url: options.appUrl }), {
      stopReason: "toolUse",
    }),
    fauxAssistantMessage(fauxToolCall("browser_snapshot", {}), { stopReason: "toolUse" }),
    step((snapshot) => {
      const ref = /\[([^\]]+)\] button "Export CSV"/.exec(snapshot)?.[1];
      if (!ref) throw new Error(`no Export CSV button in snapshot:\n${snapshot}`);
      return fauxAssistantMessage(fauxToolCall("browser_act", { actions: [{ type: "click", ref }] }), {
        stopReason: "toolUse",
      });
    }),
    step((actResult) => {
      const path = /Downloaded (\S+) \(\d+ bytes\)/.exec(actResult)?.[1];
      if (!path) throw new Error(`no download reported:\n${actResult}`);
      downloadPath = path;
      return fauxAssistantMessage(fauxToolCall("shell", { argv: ["cat", path] }), { stopReason: "toolUse" });
    }),
    step((shellResult) => {
      const csv = /stdout:\n([\s\S]*)$/.exec(shellResult)?.[1] ?? "";
      if (!csv.startsWith("name,email")) throw new Error(`unexpected CSV:\n${shellResult}`);
      return fauxAssistantMessage(
        fauxToolCall("write_file", { path: SUMMARY_PATH, content: summaryFor(csv) }),
        { stopReason: "toolUse" },
      );
    }),
    fauxAssistantMessage(fauxText(`Exported the contacts and wrote ${SUMMARY_PATH}.`)),
  ]);
  try {
    const outcome = await runAgentTask({ session: options.session, model: faux.getModel(), task: TASK });
    return { ...outcome, downloadPath };
  } finally {
    faux.unregister();
  }
}
