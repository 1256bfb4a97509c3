/**
 * Where the computer's tools keep what must survive a replacement machine (PRV-5, PER-1): under
 * the persistent workspace, not in the disposable image's `/home/user`. Set in the environment
 * of every command, the supervisor and its desktops, so gh's credential, pip/uv caches and tool
 * installs, and shell history come back after a restore.
 */
export function persistentToolEnv(workspaceDir: string): Record<string, string> {
  const bin = `${workspaceDir}/.local/bin`;
  return {
    GH_CONFIG_DIR: `${workspaceDir}/.config/gh`,
    PIP_CACHE_DIR: `${workspaceDir}/.cache/pip`,
    PYTHONUSERBASE: `${workspaceDir}/.local`,
    UV_CACHE_DIR: `${workspaceDir}/.cache/uv`,
    UV_TOOL_DIR: `${workspaceDir}/.local/share/uv/tools`,
    UV_TOOL_BIN_DIR: bin,
    UV_PYTHON_INSTALL_DIR: `${workspaceDir}/.local/share/uv/python`,
    PIPX_HOME: `${workspaceDir}/.local/share/pipx`,
    PIPX_BIN_DIR: bin,
    HISTFILE: `${workspaceDir}/.bash_history`,
    // Tools installed by uv/pipx/pip --user land in `bin`; the image's own PATH follows.
    PATH: `${bin}:/usr/local/bin:/usr/bin:/bin`,
  };
}
