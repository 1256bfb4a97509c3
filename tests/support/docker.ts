/** Docker gates live in @rakazo/sandbox/testing; this path stays for the root suites. */
export { COMPUTER_IMAGE, DOCKER_RUNTIME, dockerUnavailable } from "@rakazo/sandbox/testing";
