/**
 * PRV-3 under a running computer: its machine was deleted behind Rakazo's back (a provider
 * console, `docker rm -f`, a reclaimed host). The next use that finds it gone — any provider call
 * answering `SANDBOX_GONE` — checks with the provider that the machine is really missing and
 * moves the computer `running → provisioning` with the same provision job `computer/start`
 * queues: the job provisions a replacement and restores the last checkpoint into it (PER-2).
 * That use itself still answers `COMPUTER_GONE`; the computer is running again once the job is
 * done. The conditional update (state and ref unchanged) lets exactly one racing use replace it.
 */
import { computers } from "@rakazo/db";
import { isSandboxError, type Sandbox } from "@rakazo/sandbox";
import { and, eq } from "drizzle-orm";
import type { ServiceContext } from "../context.ts";
import type { ComputerRow } from "./access.ts";
import { enqueueOperation, recordOperation } from "./operations.ts";

const MACHINE_GONE_ERROR = "COMPUTER_GONE: the machine disappeared; a replacement is being provisioned";

/** Queues the replacement of a running computer's vanished machine; false if not (or not ours). */
async function replaceGoneMachine(ctx: ServiceContext, computer: ComputerRow): Promise<boolean> {
  const ref = computer.providerRef;
  if (computer.state !== "running" || !ref || computer.providerKind !== ctx.provider.kind) return false;
  // A transient error must not cost a live machine: only a machine the provider says is missing.
  if ((await ctx.provider.status(ref)) !== "missing") return false;
  const operationId = await ctx.db.transaction(async (tx) => {
    const [row] = await tx
      .update(computers)
      .set({ state: "provisioning", lastError: MACHINE_GONE_ERROR })
      .where(
        and(eq(computers.id, computer.id), eq(computers.state, "running"), eq(computers.providerRef, ref)),
      )
      .returning({ id: computers.id });
    return row ? recordOperation(tx, computer.id, "provision", "queued") : undefined;
  });
  if (!operationId) return false;
  await enqueueOperation(ctx, "computer.provision", computer.id, operationId);
  ctx.log.warn("computer.machine_gone", { computerId: computer.id, providerRef: ref, operationId });
  return true;
}

/**
 * `sandbox` with every asynchronous call (its own and its parts': files, desktop, …) watched:
 * a `SANDBOX_GONE` failure queues the replacement, then is rethrown unchanged.
 */
export function replacingWhenGone(ctx: ServiceContext, computer: ComputerRow, sandbox: Sandbox): Sandbox {
  const onGone = (error: unknown) => {
    if (!isSandboxError(error, "SANDBOX_GONE")) throw error;
    return replaceGoneMachine(ctx, computer).then(
      () => Promise.reject(error),
      (failure: unknown) => {
        ctx.log.warn("computer.replace_failed", { computerId: computer.id, error: failure });
        return Promise.reject(error);
      },
    );
  };
  return watched(sandbox, onGone);
}

function watched<T extends object>(target: T, onGone: (error: unknown) => Promise<never>): T {
  return new Proxy(target, {
    get(object, key) {
      const value = Reflect.get(object, key, object);
      if (typeof value === "function") {
        return (...args: unknown[]) => {
          const result = value.apply(object, args);
          return result instanceof Promise ? result.catch(onGone) : result;
        };
      }
      // The sandbox's parts (files, desktop, pageBrowser, screens) are plain objects of methods.
      if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
        return watched(value, onGone);
      }
      return value;
    },
  });
}
