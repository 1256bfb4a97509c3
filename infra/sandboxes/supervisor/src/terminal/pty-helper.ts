/**
 * The PTY helper (TRM-4): the supervisor ships as one file of Node builtins (bundle.test.ts), and
 * Node has no PTY API, so each shell runs under a tiny Python program (python3 is in the image,
 * PRV-5) that opens a pseudo-terminal with `pty.fork()` and copies bytes:
 *   stdin  → the PTY (keystrokes), PTY → stdout (output),
 *   fd 3   → resize requests, one `cols rows\n` line each (TIOCSWINSZ; the kernel sends SIGWINCH),
 *   exit status = the shell's (128 + signal when it was killed).
 * Closing stdin or SIGTERM hangs the shell up (SIGHUP to its process group, which pty.fork made
 * a new session led by the shell). Why not node-pty: see
 * docs/decisions.md ("Browser terminal").
 */
export const PTY_HELPER_SOURCE = `
import fcntl, os, pty, select, signal, struct, sys, termios, time
cols, rows, argv = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
pid, fd = pty.fork()
if pid == 0:
    try:
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
def size(c, r):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", r, c, 0, 0))
size(cols, rows)
watch = [0, 3, fd]
control = b""
def hangup():
    for sig in (signal.SIGHUP, signal.SIGCONT):
        try: os.killpg(pid, sig)
        except OSError: pass
def terminate(signum, frame):
    hangup()
    for _ in range(30):
        try:
            if os.waitpid(pid, os.WNOHANG)[0]: os._exit(128 + signum)
        except ChildProcessError:
            os._exit(128 + signum)
        time.sleep(0.01)
    try: os.killpg(pid, signal.SIGKILL)
    except OSError: pass
    try: os.waitpid(pid, 0)
    except ChildProcessError: pass
    os._exit(128 + signum)
signal.signal(signal.SIGTERM, terminate)
while fd in watch:
    try:
        ready = select.select(watch, [], [])[0]
    except InterruptedError:
        continue
    if fd in ready:
        try:
            data = os.read(fd, 65536)
        except OSError:
            data = b""
        if not data:
            watch.remove(fd)
            break
        view = memoryview(data)
        while view:
            view = view[os.write(1, view):]
    if 0 in ready:
        data = os.read(0, 65536)
        if not data:
            watch.remove(0)
            hangup()
        else:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
    if 3 in ready:
        data = os.read(3, 4096)
        if not data:
            watch.remove(3)
        control += data
        while b"\\n" in control:
            line, control = control.split(b"\\n", 1)
            parts = line.split()
            if len(parts) == 2:
                size(int(parts[0]), int(parts[1]))
status = os.waitpid(pid, 0)[1]
sys.exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))
`;
