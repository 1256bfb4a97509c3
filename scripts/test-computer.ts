/**
 * VER-3: the opt-in acceptance run with a real model and a real E2B desktop.
 *
 *   COMPUTER_E2E_MODEL=<vision-model-id> pnpm test:computer
 *
 * Needs E2B_API_KEY, OPENROUTER_API_KEY and COMPUTER_E2E_MODEL (and Docker for a temporary
 * Postgres). Without them it stops at once, non-zero, naming what is missing. It is not part of
 * `pnpm test`.
 */
const REQUIRED = [
  [
    "COMPUTER_E2E_MODEL",
    "the OpenRouter id of a vision model, e.g. COMPUTER_E2E_MODEL=anthropic/claude-sonnet-4",
  ],
  ["E2B_API_KEY", "an E2B API key (the run boots a real E2B desktop)"],
  ["OPENROUTER_API_KEY", "an OpenRouter API key (the run calls a real model)"],
] as const;

const missing = REQUIRED.filter(([name]) => !process.env[name]?.trim());
if (missing.length > 0) {
  process.stderr.write(
    `test:computer is an opt-in acceptance run and cannot start. Missing:\n${missing
      .map(([name, what]) => `  - ${name}: ${what}`)
      .join("\n")}\n`,
  );
  process.exit(2);
}

// The E2B adapter exists (packages/sandbox/src/providers/e2b-family, issue 14) but is not yet
// selectable through RAKAZO_PROVIDER, so the acceptance scenario cannot run end to end. Fail
// loudly rather than pretend to pass.
process.stderr.write(
  "test:computer: the E2B adapter exists but is not wired into the runtime's provider settings yet, " +
    "so the acceptance run (real model observes and clicks a marker button, uses terminal and file " +
    "tools, machine replaced through its stale providerRef, checkpoint restored) cannot run. " +
    "See docs/providers.md.\n",
);
process.exit(3);
