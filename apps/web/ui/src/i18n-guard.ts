/**
 * The mutation guard in the computer view (approvals.tsx, bot-policy.tsx), English and German,
 * merged into i18n.ts's catalogue.
 */
export const guardEn = {
  "guard.asks": "{bot} asks before it acts",
  "guard.action": "Wants to: {action}",
  "guard.rule": "Asked by the rule “{rule}” of its policy. Without a decision it counts as denied at {time}.",
  "guard.approve": "Approve",
  "guard.deny": "Deny",
  "guard.approved": "Approved: the action runs once.",
  "guard.denied": "Denied: the bot is told and nothing was done.",
  "guard.policyTitle": "What {bot} may change",
  "guard.policyHelp":
    "Every action that changes something (commands, file writes, clicks, typing, opening pages) is allowed, asked about or denied first. Reading and looking always work.",
  "guard.mode": "Every change",
  "guard.asDefault": "as above",
  "guard.domains":
    "Web pages by domain, one per line: a domain, then allow, ask or deny (example.test allow)",
  "guard.badDomain": "Not “domain allow|ask|deny”: {line}",
  "guard.save": "Save policy",
  "guard.saved": "Policy saved. It applies from the bot's next action.",
  "mode.allow": "allow",
  "mode.ask": "ask a person",
  "mode.deny": "deny",
  /** The run status the guard adds (BRW-8), as the run history shows it. */
  "history.status.waiting_approval": "Waiting for approval",
} as const;

export const guardDe: Partial<Record<keyof typeof guardEn, string>> = {
  "guard.asks": "{bot} fragt, bevor er handelt",
  "guard.action": "Möchte: {action}",
  "guard.rule":
    "Gefragt durch die Regel „{rule}“ seiner Richtlinie. Ohne Entscheidung gilt es um {time} als abgelehnt.",
  "guard.approve": "Erlauben",
  "guard.deny": "Ablehnen",
  "guard.approved": "Erlaubt: die Aktion läuft einmal.",
  "guard.denied": "Abgelehnt: der Bot erfährt es, nichts wurde getan.",
  "guard.policyTitle": "Was {bot} verändern darf",
  "guard.policyHelp":
    "Jede Aktion, die etwas verändert (Befehle, Dateien schreiben, Klicks, Tippen, Seiten öffnen), wird zuerst erlaubt, erfragt oder abgelehnt. Lesen und Ansehen geht immer.",
  "guard.mode": "Jede Änderung",
  "guard.asDefault": "wie oben",
  "guard.domains":
    "Webseiten nach Domain, eine pro Zeile: die Domain, dann allow, ask oder deny (example.test allow)",
  "guard.badDomain": "Nicht „Domain allow|ask|deny“: {line}",
  "guard.save": "Richtlinie speichern",
  "guard.saved": "Richtlinie gespeichert. Sie gilt ab der nächsten Aktion des Bots.",
  "mode.allow": "erlauben",
  "mode.ask": "eine Person fragen",
  "mode.deny": "ablehnen",
  "history.status.waiting_approval": "Wartet auf Freigabe",
};
