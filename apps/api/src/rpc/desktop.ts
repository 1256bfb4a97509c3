import * as contracts from "@rakazo/api-contract";
import { actOnDesktop, describeDesktopAction, observeDesktop } from "@rakazo/services";
import { defineRpc } from "./define.ts";

export const computerObserve = defineRpc(contracts.computerObserve, observeDesktop);

export const computerAct = defineRpc(contracts.computerAct, actOnDesktop, {
  activity: (input, outcome) => {
    const summary = input.actions.map(describeDesktopAction).join(", ");
    const base = { computerId: input.computerId, botId: input.botId };
    if (!outcome.ok) return { ...base, line: `computer_act ${summary}` };
    const { completed, total, error } = outcome.result;
    return {
      ...base,
      line: `computer_act ${summary} (${completed}/${total})`,
      ok: !error,
      details: { completed, total, ...(error ? { error: error.code } : {}) },
    };
  },
});
