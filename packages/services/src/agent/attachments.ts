/**
 * `attach_file` keeps what it attaches (FIL-3): the bytes are read from the bot's folder under
 * its fence and stored, capped at the attachment size limit, so the person can download them
 * later — also when the computer is stopped or its machine is gone.
 */
import { posix } from "node:path";
import { attachments, newId } from "@rakazo/db";
import { MAX_ATTACHMENT_BYTES } from "@rakazo/protocol";
import { and, desc, eq } from "drizzle-orm";
import { requireComputer } from "../computers/access.ts";
import { type DownloadedFile, downloaded } from "../computers/file-transfer.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";
import type { FencedTarget } from "./fenced.ts";
import { readAgentFileAt } from "./files.ts";

export interface AttachmentView {
  readonly id: string;
  readonly computerId: string;
  readonly botId: string;
  readonly path: string;
  readonly name: string;
  readonly size: number;
  readonly note: string | null;
  readonly createdAt: Date;
}

export async function attachAgentFile(
  ctx: ServiceContext,
  caller: Caller,
  input: FencedTarget & { path: string; note?: string; runId?: string },
): Promise<AttachmentView> {
  const { path, bytes } = await readAgentFileAt(ctx, caller, { ...input, maxBytes: MAX_ATTACHMENT_BYTES });
  const row = {
    id: newId("attachment"),
    computerId: input.computerId,
    botId: input.botId,
    runId: input.runId ?? null,
    // The workspace path (as computer/files/list names it), not the bot's relative one.
    path,
    name: posix.basename(path),
    size: bytes.byteLength,
    note: input.note ?? null,
    content: bytes,
  };
  const [stored] = await ctx.db
    .insert(attachments)
    .values(row)
    .returning({ createdAt: attachments.createdAt });
  const { content: _content, runId: _runId, ...view } = row;
  return { ...view, createdAt: stored?.createdAt ?? new Date() };
}

export async function listAttachments(
  ctx: ServiceContext,
  caller: Caller,
  input: { computerId: string; botId?: string; limit: number },
): Promise<{ attachments: AttachmentView[] }> {
  const computer = await requireComputer(ctx, caller, input.computerId);
  const rows = await ctx.db
    .select({
      id: attachments.id,
      computerId: attachments.computerId,
      botId: attachments.botId,
      path: attachments.path,
      name: attachments.name,
      size: attachments.size,
      note: attachments.note,
      createdAt: attachments.createdAt,
    })
    .from(attachments)
    .where(
      input.botId
        ? and(eq(attachments.computerId, computer.id), eq(attachments.botId, input.botId))
        : eq(attachments.computerId, computer.id),
    )
    .orderBy(desc(attachments.createdAt))
    .limit(input.limit);
  return { attachments: rows };
}

export async function downloadAttachment(
  ctx: ServiceContext,
  caller: Caller,
  input: { computerId: string; attachmentId: string },
): Promise<DownloadedFile> {
  const computer = await requireComputer(ctx, caller, input.computerId);
  const [row] = await ctx.db
    .select({ path: attachments.path, content: attachments.content })
    .from(attachments)
    .where(and(eq(attachments.id, input.attachmentId), eq(attachments.computerId, computer.id)))
    .limit(1);
  if (!row) throw new AppError("NOT_FOUND", "attachment not found");
  return downloaded(row.path, row.content);
}
