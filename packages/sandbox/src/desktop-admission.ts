/**
 * The deployment's desktop admission settings (CMP-5) as the supervisor reads them: each set
 * field becomes its `RAKAZO_DESKTOP_*` variable in the computer; an unset one keeps the
 * supervisor's default (infra/sandboxes/supervisor/src/desktops/admission.ts).
 */
export interface DesktopAdmissionSettings {
  /** MiB charged per new desktop (`RAKAZO_DESKTOP_MEMORY_MIB`). */
  readonly memoryMib?: number;
  /** Pids charged per new desktop (`RAKAZO_DESKTOP_PIDS`). */
  readonly pids?: number;
  /** MiB always kept free (`RAKAZO_DESKTOP_FLOOR_MEMORY_MIB`). */
  readonly floorMemoryMib?: number;
  /** Pids always kept free (`RAKAZO_DESKTOP_FLOOR_PIDS`). */
  readonly floorPids?: number;
  /** Refuse new desktops at this cpu.pressure (some avg10, %); 0 ignores it (`RAKAZO_DESKTOP_CPU_PRESSURE_MAX`). */
  readonly cpuPressureMax?: number;
}

const VARIABLES = {
  memoryMib: "RAKAZO_DESKTOP_MEMORY_MIB",
  pids: "RAKAZO_DESKTOP_PIDS",
  floorMemoryMib: "RAKAZO_DESKTOP_FLOOR_MEMORY_MIB",
  floorPids: "RAKAZO_DESKTOP_FLOOR_PIDS",
  cpuPressureMax: "RAKAZO_DESKTOP_CPU_PRESSURE_MAX",
} as const satisfies Record<keyof DesktopAdmissionSettings, string>;

/** The supervisor's environment for these settings: only the set ones. */
export function desktopAdmissionEnv(settings: DesktopAdmissionSettings | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, variable] of Object.entries(VARIABLES)) {
    const value = settings?.[key as keyof DesktopAdmissionSettings];
    if (value !== undefined) env[variable] = String(value);
  }
  return env;
}
