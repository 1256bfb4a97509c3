/** The one place where domain error codes become HTTP statuses. */
import type { AppErrorCode } from "@rakazo/services";

export const HTTP_STATUS: Record<
  AppErrorCode,
  400 | 401 | 403 | 404 | 405 | 409 | 410 | 413 | 415 | 421 | 422 | 500 | 501 | 502 | 503
> = {
  INVALID_JSON: 400,
  INVALID_INPUT: 400,
  BODY_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  HOST_NOT_ALLOWED: 421,
  UNKNOWN_RPC: 404,
  METHOD_NOT_ALLOWED: 405,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  ALREADY_BOOTSTRAPPED: 409,
  COMPUTER_NOT_READY: 409,
  COMPUTER_GONE: 409,
  CONFLICT: 409,
  LEASE_HELD: 409,
  STALE_LEASE: 409,
  TAKEOVER_CONFLICT: 409,
  CONTROL_HELD: 409,
  NOT_IN_CONTROL: 409,
  HUMAN_IN_CONTROL: 409,
  INVALID_PATH: 400,
  FILE_NOT_FOUND: 404,
  FILE_TOO_LARGE: 413,
  MULTI_SCREEN_UNAVAILABLE: 503,
  PROCESS_LIMIT: 409,
  QUOTA_EXCEEDED: 409,
  DESKTOP_UNAVAILABLE: 503,
  UNSUPPORTED: 501,
  PROVIDER_ERROR: 502,
  NOT_SERVER_OWNER: 403,
  WORKERS_STOPPED_REQUIRED: 400,
  OPERATION_IN_OTHER_SPACE: 403,
  OPERATION_NOT_INTERRUPTED: 409,
  OPERATION_IN_PROGRESS: 409,
  NOT_SPACE_OWNER: 403,
  LAST_OWNER: 409,
  INVITE_INVALID: 404,
  INVITE_EXPIRED: 410,
  INVITE_USED: 409,
  ALREADY_MEMBER: 409,
  DATABASE_UNAVAILABLE: 503,
  INTERNAL: 500,
};

/**
 * What each code means to a client: the README's error table is generated from this and
 * `HTTP_STATUS` (`node scripts/error-table.ts`), and a test fails when they disagree.
 */
export const ERROR_MEANING: Record<AppErrorCode, string> = {
  INVALID_JSON: "the body is not JSON",
  INVALID_INPUT:
    "the body does not match the RPC's schema (`details.issues` lists every field at once), or a value is out of range",
  BODY_TOO_LARGE:
    "the body is larger than the route takes (`details.limitBytes`: a few KiB before sign-in, 16 MiB for an RPC, the upload cap for `files/upload`); refused from its declared length before it is read",
  UNSUPPORTED_MEDIA_TYPE: "a request body not sent as `content-type: application/json`",
  HOST_NOT_ALLOWED:
    "the `Host` header names a site this server does not answer to (add it to `RAKAZO_ALLOWED_HOSTS`)",
  UNKNOWN_RPC: "no such RPC (whatever the method)",
  METHOD_NOT_ALLOWED: "an RPC's path with a method other than POST (the answer's `Allow` header says `POST`)",
  UNAUTHENTICATED: "missing, malformed, unknown or revoked token",
  FORBIDDEN:
    "a screen capability refused by the authority (`details.reason`), or a viewer's call that changes something (`details.reason`: `viewer_read_only`)",
  NOT_FOUND: "missing — or not yours: a foreign id looks exactly like a missing one",
  ALREADY_BOOTSTRAPPED:
    "`setup/bootstrap` after the first user exists (mint a token with `./rakazo token create`)",
  COMPUTER_NOT_READY: "the computer is not running (`details.state`), or belongs to another provider",
  COMPUTER_GONE: "the computer's machine disappeared under it",
  CONFLICT: "wrong lifecycle state for the request (`details.state`)",
  LEASE_HELD: "a run is driving this bot: pass its `fencingToken` or `computer/stopBot` first",
  STALE_LEASE: "the fencing token was superseded or expired; the action was refused",
  TAKEOVER_CONFLICT: "`computer/takeControl` while a run drives the bot (stop the bot first)",
  CONTROL_HELD: "another person controls this screen",
  NOT_IN_CONTROL: "a control screen URL, release or `controlToken` without holding the control lease",
  HUMAN_IN_CONTROL:
    "`computer/act` or `computer/observe` without a token while a person controls the bot (TKO-1)",
  INVALID_PATH: "a file path that escapes the workspace or is not a directory",
  FILE_NOT_FOUND: "no such file in the workspace",
  FILE_TOO_LARGE: "the file is larger than a read returns",
  MULTI_SCREEN_UNAVAILABLE:
    "no room for another desktop and none idle to close (CMP-5); `details.reason`: `memory`, `pids`, `cpu` (the computer's cgroup) or `limit` (`SANDBOX_TEAM_SCREEN_LIMIT`)",
  PROCESS_LIMIT:
    "the computer runs as many background commands as it allows (`details.limit`); kill one or wait for one to exit",
  QUOTA_EXCEEDED:
    "a new computer, a start, a recovery or a Team Computer's first use would take the space past a quota (`RAKAZO_SPACE_MAX_*`): `details.quota` (`computers`, or `memoryMib`/`cpus` of its running computers), `limit`, `used`, `requested`; delete or stop one of its computers first",
  DESKTOP_UNAVAILABLE: "the bot's desktop did not start",
  UNSUPPORTED:
    "this provider or deployment lacks the feature (desktop, screens, page browser, agent model, a network policy it cannot enforce: `details.mode`)",
  PROVIDER_ERROR: "the computer's provider failed (`details.providerCode`)",
  NOT_SERVER_OWNER:
    "`computer/releaseInterrupted` by someone other than the server owner (the installation's first user unless the operator transferred it, OPS-6)",
  WORKERS_STOPPED_REQUIRED:
    "`computer/releaseInterrupted` without `workersStopped: true`: assert that its workers and provider calls have stopped (OPS-6)",
  OPERATION_IN_OTHER_SPACE:
    "`computer/releaseInterrupted` for an operation of a space the server owner does not own",
  OPERATION_NOT_INTERRUPTED:
    "`computer/releaseInterrupted` for an operation that is not `interrupted` (`details.status`)",
  OPERATION_IN_PROGRESS:
    "the computer is reserved by an update or recovery (OPS-1): new runs, stop, start and takeover wait (`details.kind`, `details.stage`)",
  NOT_SPACE_OWNER:
    "inviting, removing another member or changing a role by someone who is not an owner of the space",
  LAST_OWNER: "removing or demoting a space's only owner: make someone else owner first",
  INVITE_INVALID: "not an open invite code (unknown, mistyped or revoked)",
  INVITE_EXPIRED: "the invite code is past its expiry: ask for a new one",
  INVITE_USED: "the invite code was already redeemed (each is single use)",
  ALREADY_MEMBER: "`invite/accept` by someone already in that space (`details.role`); the code stays unspent",
  DATABASE_UNAVAILABLE:
    "Postgres could not be reached (restarting, down, connection dropped): retry; nothing was half-done by this request",
  INTERNAL: "a bug: the server logged it",
};
