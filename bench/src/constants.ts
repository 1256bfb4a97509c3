export const BLAST_BYTES = 256 * 1024 * 1024;
/** The screen-path bench's computer and bot (screen-path.bench.ts and its peer processes). */
export const BENCH_COMPUTER = "cmp_screenpath";
export const BENCH_BOT = "bot_screenpath";
