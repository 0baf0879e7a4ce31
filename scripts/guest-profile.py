#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Sample a TCG guest's instruction pointer and report it by kernel symbol.

    guest-profile.py SOCKET VMLINUX OUT [TOP]

Connects to QEMU's human monitor on the unix socket SOCKET (QEMU started
with "-monitor unix:SOCKET,server,nowait"), asks "info registers" every
2 ms until QEMU exits, and writes the RIPs to OUT.raw and a report to OUT:
samples per function of VMLINUX (user space counted as one), the most
frequent first, TOP lines (default 40).  Under TCG the monitor sees the
vCPU between translation blocks, so a sample is where a block starts:
good enough to say which functions the time goes to, not which lines.
Boot the guest with -smp 1 (the monitor reports CPU 0) and nokaslr.
"""
import bisect
import collections
import re
import socket
import subprocess
import sys
import time


def connect(path):
    for _ in range(600):
        try:
            s = socket.socket(socket.AF_UNIX)
            s.connect(path)
            s.settimeout(10)
            return s
        except OSError:
            time.sleep(0.5)
    sys.exit('guest-profile: no monitor at ' + path)


def command(s, cmd):
    s.sendall((cmd + '\n').encode())
    buf = b''
    while not buf.endswith(b'(qemu) '):
        chunk = s.recv(65536)
        if not chunk:
            raise EOFError
        buf += chunk
    return buf.decode(errors='replace')


def symbols(vmlinux):
    out = subprocess.run(['nm', '-n', vmlinux], capture_output=True,
                         text=True, check=True).stdout
    syms = []
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 3 and f[1] in 'tTwW':
            syms.append((int(f[0], 16), f[2]))
    return syms


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    sock, vmlinux, out = sys.argv[1:4]
    top = int(sys.argv[4]) if len(sys.argv) > 4 else 40
    s = connect(sock)
    ips = []
    try:
        command(s, '')
        while True:
            m = re.search(r'RIP=([0-9a-f]+)', command(s, 'info registers'))
            if m:
                ips.append(int(m.group(1), 16))
            time.sleep(0.002)
    except (EOFError, OSError):
        pass                    # QEMU exited: the guest is done
    with open(out + '.raw', 'w') as f:
        f.write(''.join('%x\n' % ip for ip in ips))
    syms = symbols(vmlinux)
    addrs = [a for a, _ in syms]
    count = collections.Counter()
    for ip in ips:
        if ip < 0xffff800000000000:
            count['[user]'] += 1
            continue
        i = bisect.bisect_right(addrs, ip) - 1
        count[syms[i][1] if i >= 0 else '[unknown]'] += 1
    with open(out, 'w') as f:
        f.write('samples %d\n' % len(ips))
        for name, n in count.most_common(top):
            f.write('%7d %5.1f%% %s\n' % (n, 100.0 * n / max(len(ips), 1), name))


if __name__ == '__main__':
    main()
