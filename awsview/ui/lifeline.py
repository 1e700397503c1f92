"""Gone when its terminal is gone: a command that draws ends with what it draws on.

The viewer, the demo, the class view and every `awsview serve` session run their Textual app
through `run()`. The app is asked to exit when

- SIGHUP or SIGTERM arrives (a terminal window closed on a shell that execs it, `kill`);
- its terminal or its pipes hang up: poll() reports POLLHUP or POLLERR on stdin, stdout or
  stderr (a tmux pane killed, a terminal window closed, the server of a serve session gone);
- its parent is gone (it was reparented: the shell or `make` that started it died).

If it has not exited `EXIT_GRACE_S` after that, the process ends with `os._exit`: on a dead
terminal Textual's writer thread dies on EIO and the app's next writes can block for good.

Why a watcher of our own: nobody signals the app when it is not the session leader. `make demo`
in a tmux pane, pane killed: make gets the SIGHUP and waits for its child, while Textual's input
thread reads end-of-file from the hung-up terminal in a tight loop without telling the app,
spinning a core for as long as nobody kills it. A serve session whose server was
killed lost its input the same way and went on polling. The watcher is one thread asleep in
poll(); it wakes every `CHECK_S` to look at the parent, which costs next to nothing.

Children go with the process: the demo's emulator runs in-process, and Lambda workers watch their
own parent (`awsview/emulator/_bootstrap.py`).
"""

from __future__ import annotations

import os
import select
import signal
import stat
import threading
from collections.abc import Callable
from typing import Any

CHECK_S = 0.25  # how often the parent is looked at; a hangup wakes poll() at once
EXIT_GRACE_S = 1.5  # from losing the terminal to os._exit if the app has not gone by then
SIGNALS = (signal.SIGHUP, signal.SIGTERM)
HANGUP = select.POLLHUP | select.POLLERR | select.POLLNVAL
# The parent as the command started: `awsview.cli.main` imports this module first, so a parent that
# dies during the second or two of start-up is still noticed.
PARENT = os.getppid()


class Lifeline:
    """Ends an app (and, failing that, the process) when its terminal, pipes or parent go."""

    def __init__(
        self,
        app: Any,
        fds: tuple[int, ...] = (0, 1, 2),
        parent: int = PARENT,
        before_exit: Callable[[], object] | None = None,
    ):
        self.app = app
        self.before_exit = before_exit  # what must not outlive even the os._exit (a temp folder)
        self.parent = parent
        self.fds = tuple(fd for fd in fds if _watchable(fd))
        self.loop: Any = None  # the app's asyncio loop, once run() made it
        self.reason: str | None = None
        self.code = 0
        self._lost = threading.Lock()
        self._done = threading.Event()

    def run(self) -> Any:
        """Run the app until it quits or loses its terminal; the app's return value."""
        import asyncio  # here: `awsview.cli.main` imports this module for every command

        previous = {signum: signal.getsignal(signum) for signum in SIGNALS}
        with asyncio.Runner() as runner:  # asyncio.run's cleanup, with the loop known beforehand
            self.loop = runner.get_loop()
            self._install()
            watcher = threading.Thread(target=self._watch, name="awsview-lifeline", daemon=True)
            watcher.start()
            try:
                return runner.run(self.app.run_async())
            finally:
                self._done.set()
                for signum, handler in previous.items():
                    signal.signal(signum, handler)

    def lose(self, reason: str, code: int) -> None:
        """The terminal is gone: ask the app to exit, and end the process if it does not."""
        if not self._lost.acquire(blocking=False):
            return  # already going
        self.reason, self.code = reason, code
        deadline = threading.Timer(EXIT_GRACE_S, self._abandon, (code,))
        deadline.daemon = True  # also ends an interpreter shutdown stuck joining a thread
        deadline.start()
        loop = self.loop
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(self._exit_app)
            except RuntimeError:  # the loop closed meanwhile: the app is gone already
                pass

    def _abandon(self, code: int) -> None:
        """The app did not go in time: end the process, after the one thing that must not stay."""
        try:
            if self.before_exit is not None:
                self.before_exit()
        finally:
            os._exit(code)

    def _exit_app(self) -> None:
        self.app.exit(return_code=self.code)

    def _install(self) -> None:
        # signal.signal, not loop.add_signal_handler: a Python handler runs even while the main
        # thread is blocked in a write to a dead terminal or on a full queue (PEP 475), and that
        # is when the deadline matters.
        for signum in SIGNALS:
            signal.signal(signum, self._on_signal)

    def _on_signal(self, signum: int, _frame: Any) -> None:
        self.lose(f"signal {signal.Signals(signum).name}", 128 + signum)

    def _watch(self) -> None:
        poller = select.poll()
        for fd in self.fds:
            poller.register(fd, 0)  # no events asked for: only hangups and errors are reported
        took_signals_back = False
        while not self._done.is_set():
            events = poller.poll(CHECK_S * 1000)
            if any(mask & HANGUP for _, mask in events):
                self.lose("its terminal closed", 128 + signal.SIGHUP)
                return
            if os.getppid() != self.parent:
                self.lose("its parent is gone", 128 + signal.SIGHUP)
                return
            if not took_signals_back and getattr(self.app, "is_running", False):
                # Textual's web driver (a serve session) takes SIGTERM for itself when it starts,
                # without a deadline: take it back (signal.signal only works on the main thread).
                took_signals_back = True
                try:
                    self.loop.call_soon_threadsafe(self._install)
                except RuntimeError:  # the loop closed meanwhile
                    return


def _watchable(fd: int) -> bool:
    """A terminal, pipe or socket: what can hang up (a file or /dev/null cannot)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or (stat.S_ISCHR(mode) and os.isatty(fd))


def run(app: Any, before_exit: Callable[[], object] | None = None) -> Any:
    """Run a Textual app that draws on this process's terminal (or a serve session's pipes).
    ``before_exit`` runs if the process has to be ended without its usual cleanup."""
    return Lifeline(app, before_exit=before_exit).run()
