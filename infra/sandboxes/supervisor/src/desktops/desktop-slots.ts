/**
 * The per-bot desktop lifecycle (CMP-2, CMP-4, CMP-5, SCR-3): one `DesktopSlots` per computer,
 * driven through the RPC server. Decisions come from `slot-table.ts`; processes from a
 * `StackLauncher`. Invariants:
 * - a bot has at most one slot; calls for one bot run one at a time;
 * - a slot is free only after a successful teardown; a failed one stays `teardown_failed`
 *   (counted against the cap) and is retried before every allocation;
 * - (index, generation) is never reused: generations are persisted in `<runDir>/slots.json`.
 */
import type {
  ActResultWire,
  HealthResult,
  ObserveResult,
  SlotInfoWire,
  SlotState,
} from "../daemon/protocol.ts";
import { SupervisorError } from "../errors.ts";
import { errorMessage, type Log, silentLog } from "../log.ts";
import { runActions } from "./actions.ts";
import {
  type AdmissionPolicy,
  admissionReport,
  type CgroupSample,
  DEFAULT_ADMISSION_POLICY,
  planAdmission,
} from "./admission.ts";
import { BotQueue } from "./bot-queue.ts";
import { type DesktopStack, type StackLauncher, StackStartError } from "./desktop-stack.ts";
import { profileDir } from "./profile-dir.ts";
import { loadGenerations, saveGenerations } from "./slot-generations.ts";
import { freeSlot, markFree, type Slot, slotInfo } from "./slot-record.ts";
import { activeCount, type SlotView } from "./slot-table.ts";
import { planStack, type StackLayout } from "./stack-argv.ts";

export interface DesktopSlotsOptions {
  readonly launcher: StackLauncher;
  readonly workspace: string;
  readonly layout: StackLayout;
  /** 0 = no cap (CMP-5). */
  readonly screenLimit: number;
  readonly now?: () => number;
  /** Reads the computer's cgroup before each new desktop (cgroup.ts); none = only the cap applies. */
  readonly sampleCgroup?: () => CgroupSample | null;
  readonly admission?: AdmissionPolicy;
  /** Where teardown failures are reported; none = dropped. */
  readonly log?: Log;
}

/** Told before a slot generation is torn down (the gateway closes its viewers first, SCR-3). */
export type SlotClosingListener = (index: number, generation: number) => void;

export class DesktopSlots {
  readonly #options: DesktopSlotsOptions;
  readonly #slots: Slot[] = [];
  readonly #botQueue = new BotQueue();
  /** Serialises allocation decisions across bots (starting a stack happens outside it). */
  #allocation: Promise<unknown> = Promise.resolve();
  readonly #now: () => number;
  readonly #log: Log;
  readonly #closingListeners: SlotClosingListener[] = [];

  constructor(options: DesktopSlotsOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#log = options.log ?? silentLog;
    for (const [index, generation] of Object.entries(loadGenerations(options.layout.runDir))) {
      this.#slots[Number(index)] = freeSlot(Number(index), generation);
    }
    // Fill holes so indices stay dense.
    for (let i = 0; i < this.#slots.length; i += 1) this.#slots[i] ??= freeSlot(i, 0);
  }

  health(): HealthResult {
    return {
      ok: true,
      pid: process.pid,
      active: activeCount(this.#views()),
      limit: this.#options.screenLimit,
      live: this.#slots.filter((slot) => slot.state === "running").length,
      ...admissionReport(
        this.#options.admission ?? DEFAULT_ADMISSION_POLICY,
        this.#options.sampleCgroup?.() ?? null,
      ),
    };
  }

  /** Adds a listener told before every slot teardown (the daemon's context wires the gateway). */
  onSlotClosing(listener: SlotClosingListener): void {
    this.#closingListeners.push(listener);
  }

  /** The current occupant of a slot, for the screen gateway (SCR-2). */
  slotAt(
    index: number,
  ): { index: number; generation: number; botId: string; state: SlotState; vncSocket: string } | undefined {
    const slot = this.#slots[index];
    if (!slot || slot.botId === null || slot.state === "free") return undefined;
    return {
      index: slot.index,
      generation: slot.generation,
      botId: slot.botId,
      state: slot.state,
      vncSocket: this.#plan(slot, slot.botId).vncSocket,
    };
  }

  /**
   * Starts the RFB server (x11vnc) of slot `index`'s desktop unless it serves already, and
   * answers its socket: the gateway calls it for every screen viewer, so x11vnc starts on a
   * desktop's first viewer and stays until the desktop stops. Not queued behind the bot's calls
   * (a viewer does not wait for an agent's act). `DESKTOP_UNAVAILABLE` when that generation is
   * not running or x11vnc did not start; the next call tries again.
   */
  async serveScreen(index: number, generation: number): Promise<string> {
    const slot = this.#slots[index];
    const stack = slot?.stack;
    if (!slot || !stack || slot.generation !== generation || slot.state !== "running") {
      throw new SupervisorError(
        "DESKTOP_UNAVAILABLE",
        `slot ${index} generation ${generation} is not running`,
      );
    }
    try {
      await stack.serveScreen();
    } catch (error) {
      throw new SupervisorError(
        "DESKTOP_UNAVAILABLE",
        `screen server of slot ${index}: ${errorMessage(error)}`,
      );
    }
    return stack.plan.vncSocket;
  }

  /**
   * `serveScreen` for a bot's running desktop (`desktop.openScreen`), for host-side tools that
   * dial the socket themselves; it never starts a desktop.
   */
  async openScreen(
    botId: string,
  ): Promise<{ vncSocket: string; slot: { index: number; generation: number } }> {
    const slot = this.#slotOf(botId);
    if (!slot) throw new SupervisorError("DESKTOP_UNAVAILABLE", "this bot has no running desktop");
    const { index, generation } = slot;
    return { vncSocket: await this.serveScreen(index, generation), slot: { index, generation } };
  }

  list(): SlotInfoWire[] {
    return this.#slots
      .filter((slot) => slot.botId !== null && slot.state !== "free")
      .map((slot) => slotInfo(slot, this.#plan(slot, slot.botId ?? "")));
  }

  observe(botId: string): Promise<ObserveResult> {
    return this.#forBot(botId, async () => {
      const slot = await this.#ensure(botId);
      return this.#using(slot, async (stack) => {
        const frame = await stack.capture();
        return {
          pngBase64: frame.png.toString("base64"),
          width: frame.width,
          height: frame.height,
          frameHash: frame.frameHash,
          slot: { index: slot.index, generation: slot.generation },
        };
      });
    });
  }

  act(botId: string, actions: unknown): Promise<ActResultWire> {
    if (!Array.isArray(actions)) throw new SupervisorError("INVALID_ACTION", "actions must be an array");
    return this.#forBot(botId, async () => {
      const slot = await this.#ensure(botId);
      return this.#using(slot, (stack) => runActions(actions, (step) => stack.runStep(step)));
    });
  }

  /**
   * Runs `work` while the bot's desktop runs: started on first use like observe (CMP-4), under
   * the same cap (CMP-5), serialised with the bot's other calls and counted as busy (so never
   * evicted mid-call). The page methods use it to drive the bot's visible Chromium (BRW-1).
   */
  withDesktop<T>(botId: string, work: (plan: { debugPort: number }) => Promise<T>): Promise<T> {
    return this.#forBot(botId, async () => {
      const slot = await this.#ensure(botId);
      return this.#using(slot, (stack) => work({ debugPort: stack.plan.debugPort }));
    });
  }

  /** The running desktop's DevTools port (BRW-2); `DESKTOP_UNAVAILABLE` when the bot has none. */
  debugPortOf(botId: string): number {
    const slot = this.#slotOf(botId);
    if (!slot?.stack || slot.state !== "running") {
      throw new SupervisorError("DESKTOP_UNAVAILABLE", "this bot has no running desktop");
    }
    return slot.stack.plan.debugPort;
  }

  /** The computer's workspace folder (downloads land in `<workspace>/downloads`). */
  get workspace(): string {
    return this.#options.workspace;
  }

  /** Ends the bot's desktop (SCR-3); the profile stays (CMP-2). Releasing a bot without one is a no-op. */
  release(botId: string): Promise<{ released: boolean }> {
    return this.#forBot(botId, async () => {
      const slot = this.#slotOf(botId);
      if (!slot) return { released: false };
      await this.#serialAllocation(() => this.#teardown(slot));
      if (slot.state !== "free") {
        throw new SupervisorError(
          "DESKTOP_UNAVAILABLE",
          `teardown of slot ${slot.index} failed; it stays reserved`,
        );
      }
      return { released: true };
    });
  }

  /**
   * Closes the bot's browser cleanly and keeps its desktop: display, x11vnc and every viewer stay
   * (CMP-6), the slot keeps its generation, and the next use brings Chromium back with its last
   * session (`#using`). For a consistent profile on disk (PER-7). No-op without a running desktop.
   */
  closeBrowser(botId: string): Promise<{ closed: boolean }> {
    return this.#forBot(botId, async () => {
      const slot = this.#slotOf(botId);
      if (!slot?.stack?.closeBrowser || slot.state !== "running") return { closed: false };
      slot.busy += 1;
      try {
        return { closed: await slot.stack.closeBrowser() };
      } catch (error) {
        throw new SupervisorError("DESKTOP_UNAVAILABLE", (error as Error).message);
      } finally {
        slot.busy -= 1;
      }
    });
  }

  /** Marks a bot's desktop as controlled (never evicted) or not. Does not start a desktop. */
  setControlled(botId: string, controlled: boolean): { controlled: boolean; active: boolean } {
    const slot = this.#slotOf(botId);
    if (slot) slot.controlled = controlled;
    return { controlled, active: slot !== undefined };
  }

  /** Tears every desktop down (daemon shutdown). */
  async shutdown(): Promise<void> {
    await this.#serialAllocation(async () => {
      for (const slot of this.#slots) if (slot.state !== "free") await this.#teardown(slot);
    });
  }

  // ------------------------------------------------------------------ internals

  #slotOf(botId: string): Slot | undefined {
    return this.#slots.find(
      (slot) => slot.botId === botId && slot.state !== "free" && slot.state !== "teardown_failed",
    );
  }

  #views(): SlotView[] {
    return this.#slots.map(({ stack: _stack, startedAt: _s, ...view }) => view);
  }

  #plan(slot: Slot, botId: string) {
    return planStack(this.#options.layout, slot, botId ? profileDir(this.#options.workspace, botId) : "");
  }

  #forBot<T>(botId: string, work: () => Promise<T>): Promise<T> {
    if (typeof botId !== "string" || botId.length === 0 || botId.length > 512) {
      return Promise.reject(new SupervisorError("INVALID_ACTION", "botId must be a non-empty string"));
    }
    return this.#botQueue.run(botId, work);
  }

  #serialAllocation<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#allocation.then(work, work);
    this.#allocation = next.catch(() => undefined);
    return next;
  }

  async #using<T>(slot: Slot, work: (stack: DesktopStack) => Promise<T>): Promise<T> {
    if (!slot.stack) throw new SupervisorError("DESKTOP_UNAVAILABLE", `slot ${slot.index} has no desktop`);
    slot.busy += 1;
    try {
      // A browser that crashed or was killed comes back with its last tabs before any use (CMP-6).
      await slot.stack.reviveBrowser?.();
      return await work(slot.stack);
    } catch (error) {
      if (error instanceof SupervisorError) throw error;
      throw new SupervisorError("DESKTOP_UNAVAILABLE", (error as Error).message);
    } finally {
      slot.busy -= 1;
      slot.lastUsedAt = this.#now();
    }
  }

  /** The bot's running slot, starting a desktop on first use (CMP-4). */
  async #ensure(botId: string): Promise<Slot> {
    let existing = this.#slotOf(botId);
    if (existing?.state === "stopping") {
      // Being evicted: wait for the teardown to finish, then allocate afresh.
      await this.#serialAllocation(async () => undefined);
      existing = this.#slotOf(botId);
    }
    if (existing) return existing;
    const slot = await this.#serialAllocation(() => this.#reserve(botId));
    try {
      slot.stack = await this.#options.launcher.start(this.#plan(slot, botId));
    } catch (error) {
      if (error instanceof StackStartError && error.leftover) {
        // The launcher could not clean up: keep the slot reserved and retry later (SCR-3).
        slot.stack = error.leftover;
        slot.state = "teardown_failed";
      } else {
        markFree(slot);
      }
      throw new SupervisorError(
        "DESKTOP_UNAVAILABLE",
        `desktop for slot ${slot.index} did not start: ${(error as Error).message}`,
      );
    }
    slot.state = "running";
    slot.lastUsedAt = this.#now();
    return slot;
  }

  async #reserve(botId: string): Promise<Slot> {
    for (const slot of this.#slots) if (slot.state === "teardown_failed") await this.#teardown(slot);
    // Each pass either reserves, fails, or frees/poisons one victim, so this terminates.
    for (;;) {
      const plan = planAdmission(
        this.#views(),
        this.#options.screenLimit,
        this.#options.sampleCgroup?.() ?? null,
        this.#options.admission ?? DEFAULT_ADMISSION_POLICY,
      );
      if (plan.kind === "unavailable") {
        // Refused at once, never queued: a queue would stall the caller and thrash the computer.
        throw new SupervisorError(
          "MULTI_SCREEN_UNAVAILABLE",
          plan.reason === "limit"
            ? `all ${plan.limit} desktops are in use and none is idle and uncontrolled (SANDBOX_TEAM_SCREEN_LIMIT)`
            : `no room for another desktop (${plan.reason}); ${plan.active} desktops are live and none is idle and uncontrolled`,
          { reason: plan.reason, active: plan.active, limit: plan.limit },
        );
      }
      if (plan.kind === "evict") {
        await this.#teardown(this.#slots[plan.index] as Slot);
        continue;
      }
      const slot = this.#slots[plan.index] ?? freeSlot(plan.index, 0);
      this.#slots[plan.index] = slot;
      slot.generation = plan.generation;
      slot.state = "starting";
      slot.botId = botId;
      slot.controlled = false;
      slot.startedAt = this.#now();
      slot.lastUsedAt = slot.startedAt;
      saveGenerations(
        this.#options.layout.runDir,
        Object.fromEntries(this.#slots.map((slot) => [slot.index, slot.generation])),
      );
      return slot;
    }
  }

  async #teardown(slot: Slot): Promise<void> {
    slot.state = "stopping";
    for (const listener of this.#closingListeners) {
      try {
        listener(slot.index, slot.generation);
      } catch (error) {
        this.#log({ event: "desktop.viewers.close_failed", slot: slot.index, message: errorMessage(error) });
      }
    }
    try {
      await slot.stack?.teardown();
      markFree(slot);
    } catch (error) {
      slot.state = "teardown_failed";
      this.#log({ event: "desktop.teardown.failed", slot: slot.index, message: errorMessage(error) });
    }
  }
}
