/**
 * The attachment size limit (FIL-3): the most an upload, a person's text write, a download or an
 * `attach_file` attachment may hold. API contract, services and the bot's tools share it.
 */
export const MAX_ATTACHMENT_BYTES = 25 * 1024 * 1024;
