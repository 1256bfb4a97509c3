/**
 * What every VER-2 run must show, whatever computer it ran on: the agent's tool calls in order,
 * the downloaded CSV and the summary in the workspace, and one redacted activity event per
 * mutating call (the read-only snapshot is not recorded). Used by the fake and Docker tests.
 */
import { expect } from "vitest";
import { type Caller, listActivity, type ServiceContext } from "../services-internal.ts";
import { contactsCsv } from "./contacts-app.ts";
import { type ScenarioResult, SUMMARY_PATH, summaryFor } from "./contacts-export.ts";

export async function expectContactsExportRecorded(input: {
  ctx: ServiceContext;
  caller: Caller;
  computerId: string;
  runId: string;
  botId: string;
  result: ScenarioResult;
  /** Reads a file as text, by the path the bot used (relative to its folder, CMP-1). */
  read: (path: string) => Promise<string>;
}): Promise<void> {
  const { result } = input;
  expect(result.error).toBeUndefined();
  expect(result.toolCalls.map((c) => [c.name, c.isError])).toEqual([
    ["browser_navigate", false],
    ["browser_snapshot", false],
    ["browser_act", false],
    ["shell", false],
    ["write_file", false],
  ]);
  // The team's downloads folder, as a Team Computer's bot names it from bots/<bot-id>/ (CMP-1).
  expect(result.downloadPath).toBe("../../downloads/contacts.csv");
  expect(await input.read(result.downloadPath)).toBe(contactsCsv());
  const summary = await input.read(SUMMARY_PATH);
  expect(summary).toBe(summaryFor(contactsCsv()));
  expect(summary).toContain("3 contacts: Ada Lovelace, Grace Hopper, Alan Turing");

  const { events } = await listActivity(input.ctx, input.caller, { computerId: input.computerId });
  expect(events.map((e) => [e.type, e.payload.tool, e.payload.ok])).toEqual([
    ["computer.command", "browser_navigate", true],
    ["computer.command", "browser_act", true],
    ["computer.command", "shell", true],
    ["computer.command", "write_file", true],
  ]);
  expect(events.every((e) => e.runId === input.runId && e.botId === input.botId)).toBe(true);
  expect(events[1]?.payload.line).toContain("downloaded ../../downloads/contacts.csv");
  expect(events[2]?.payload.command).toBe("cat ../../downloads/contacts.csv");
  expect(events[2]?.payload.outputTail).toContain("Grace Hopper");
  expect(events[3]?.payload.line).toBe(`write_file ${SUMMARY_PATH} (${Buffer.byteLength(summary)} bytes)`);
}
