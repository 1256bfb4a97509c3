/** The suite gates live in @rakazo/sandbox/testing; this path stays for the root suites. */
export {
  dockerOptedOut,
  missingOrFail,
  missingTools,
  requireDocker,
  requireTools,
  type SuiteGate,
} from "@rakazo/sandbox/testing";
