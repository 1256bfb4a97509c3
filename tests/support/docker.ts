/** Docker gates live in @rakazo/sandbox/testing; this path stays for the root suites. */
export { COMPUTER_IMAGE, dockerUnavailable } from "@rakazo/sandbox/testing";
