/** A well-formed `health` result for stand-in supervisors (the protocol's table validates every result). */
export const HEALTH_RESULT = {
  ok: true,
  pid: 7,
  active: 0,
  limit: 0,
  live: 0,
  memory: { usedBytes: null, maxBytes: null },
  pids: { current: null, max: null },
  cpuPressure: null,
  desktopEstimate: { memoryBytes: 1, pids: 1 },
  admission: { desktop: { memoryBytes: 1, pids: 1 }, floor: { memoryBytes: 1, pids: 1 }, cpuPressureMax: 0 },
} as const;
