/** open_path, launch_app (TOOL-1) and request_takeover (TKO-3). */
import { requestTakeover as requestRunTakeover } from "@rakazo/services";
import { launchApp as launchOnDisplay, openPath as openOnDisplay } from "../services-internal.ts";
import { fence } from "../session.ts";
import { defineTool, mutate, shellLine, type ToolFactory, text } from "./common.ts";

export const openPath: ToolFactory = (session) =>
  defineTool(
    "open_path",
    "Open a file",
    "Open a workspace file or folder on your desktop with its default application.",
    async ({ path }) =>
      mutate(
        session,
        "open_path",
        { path },
        async () => {
          await openOnDisplay(session.ctx, session.caller, { ...fence(session), path });
          return { value: text(`Opened ${path} on your desktop.`), activity: { line: `open_path ${path}` } };
        },
        () => ({ line: `open_path ${path}` }),
      ),
  );

export const launchApp: ToolFactory = (session) =>
  defineTool(
    "launch_app",
    "Start an application",
    'Start a graphical application on your desktop, e.g. app "gedit" with args ["notes.txt"].',
    async ({ app, args }) => {
      const line = `launch_app ${shellLine([app, ...(args ?? [])])}`;
      return mutate(
        session,
        "launch_app",
        { app, args },
        async () => {
          await launchOnDisplay(session.ctx, session.caller, {
            ...fence(session),
            app,
            ...(args ? { args } : {}),
          });
          return { value: text(`Started ${app}.`), activity: { line } };
        },
        () => ({ line }),
      );
    },
  );

export const requestTakeover: ToolFactory = (session) =>
  defineTool(
    "request_takeover",
    "Ask a person",
    "Ask a person to take over your screen: for logins, two-factor codes, CAPTCHAs, payments, or a " +
      "decision you should not make alone" +
      (session.model.vision
        ? "."
        : ", and whenever page tools cannot operate a page (you cannot see the screen).") +
      " Say exactly what they must do. Your run pauses until they hand back.",
    async ({ reason }) => {
      const run = await requestRunTakeover(session.ctx, session.caller, {
        runId: session.runId,
        fencingToken: session.fencingToken,
        reason,
      });
      return {
        ...text("A person was asked to take over. Stop here; the run resumes when they hand back.", {
          status: run.status,
        }),
        terminate: true,
      };
    },
  );
