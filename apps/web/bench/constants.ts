export const BLAST_BYTES = 256 * 1024 * 1024;
