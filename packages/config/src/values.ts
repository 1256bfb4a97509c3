/** Value schemas shared by the environment slices (./env.ts) and the provider table (./providers.ts). */
import { z } from "zod";

/** Unset, empty and blank are one thing: no value. */
export const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === "" ? undefined : v));
export const optionalUrl = optionalString.pipe(z.url().optional());
export const optionalSeconds = z.coerce.number().int().min(1).optional();
