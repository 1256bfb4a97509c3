/**
 * Setup file of the integration project: every log line written while a test file runs is
 * collected, and after the file the secrets its fixtures registered (tokens, screen
 * capabilities and tickets, master keys, service tokens) must appear in none of them
 * (security.md). A leak fails the file that caused it.
 */
import { assertNoSecretLogged, startLogSecretScan } from "@rakazo/log/testing";
import { afterAll } from "vitest";

startLogSecretScan();
afterAll(() => assertNoSecretLogged());
