"""Ports for tests that name them (--start_port, --master, endpoints started by hand).

A port found free and then closed can be taken by anyone before the process meant to bind it
starts: under `ctest -j`, by another test's launcher asking for a free port, or by an outgoing
connection. So tests never use the kernel's ephemeral range for named ports. Each test process
takes a block of BLOCK consecutive ports below that range, locked (flock on a file per block)
for as long as the process lives, so no other test process can hold the same block. Nothing
in the project asks the kernel for ports there: free ports come from the ephemeral range, the
launcher's defaults are 6069-6170 + N, and a dispatched job's master is in 20000-32000.
Derived ports (the master one below --start_port, the trainers above it) stay inside the block
when a test asks for a run of them with port_run()."""

import fcntl
import os
import socket
import tempfile

BLOCK = 50
FIRST, END = 10000, 20000
LOCK_DIR = os.path.join(tempfile.gettempdir(), "paddle-launch-test-ports")


def _ephemeral_low():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _bindable(port):
    for ip in ("127.0.0.1", "127.0.0.2"):
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind((ip, port))
            except OSError:
                return False
    return True


class PortBlock:
    """BLOCK consecutive ports held by this process alone; handed out in order, never twice."""

    def __init__(self):
        end = min(END, _ephemeral_low())
        if end - FIRST < BLOCK:
            raise RuntimeError(f"the ephemeral port range starts at {end}; tests need ports {FIRST}-{FIRST + BLOCK} below it")
        os.makedirs(LOCK_DIR, exist_ok=True)
        blocks = list(range(FIRST, end - BLOCK + 1, BLOCK))
        start = os.getpid() % len(blocks)  # spread the processes, so few try the same locks
        for i in range(len(blocks)):
            base = blocks[(start + i) % len(blocks)]
            fd = os.open(os.path.join(LOCK_DIR, str(base)), os.O_CREAT | os.O_RDWR, 0o666)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            self._fd, self.base, self._next = fd, base, base  # the lock lives as long as this process
            return
        raise RuntimeError(f"every block of test ports in {FIRST}-{end} is held by another test process")

    def take(self, n):
        """The first of n consecutive ports, each bindable on 127.0.0.1 and 127.0.0.2 now. Past
        the block's end it starts again at its beginning: a test that asks for more than BLOCK
        ports in all has finished with the first ones by then, and ports still bound are skipped."""
        for port in [*range(self._next, self.base + BLOCK - n + 1), *range(self.base, self._next)]:
            if all(_bindable(p) for p in range(port, port + n)):
                self._next = port + n
                return port
        raise RuntimeError(f"no {n} consecutive free ports left in this test's block {self.base}-{self.base + BLOCK - 1}")


_block = None


def _the_block():
    global _block
    if _block is None:
        _block = PortBlock()
    return _block


def free_ports(n):
    """n distinct ports no other test process uses."""
    return [_the_block().take(1) for _ in range(n)]


def port_run(n):
    """The first of n consecutive ports no other test process uses (for --start_port and the
    ports derived from it: pass port_run(1 + k) + 1 as --start_port to own the master below it)."""
    return _the_block().take(n)
