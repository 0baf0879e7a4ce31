// SPDX-License-Identifier: GPL-2.0
/*
 * guest-exit - end the QEMU guest with a status the host can read.
 *
 * Writes the status to QEMU's isa-debug-exit device (iobase 0xf4); QEMU
 * then exits with (status << 1) | 1.  If the device is absent, fall back to
 * a reboot, which "-no-reboot" turns into a QEMU exit.
 *
 * First it waits until what /init wrote to its serial line (stdout) has
 * gone out: QEMU exits at the write to the port, and the last line,
 * "HARNESS: done", may still be in the tty's buffer, to be sent by the
 * UART's interrupt on another CPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <termios.h>
#include <unistd.h>
#include <sys/io.h>
#include <sys/reboot.h>

#define DEBUG_EXIT_PORT 0xf4

int main(int argc, char **argv)
{
	unsigned int status = argc > 1 ? (unsigned int)atoi(argv[1]) : 0;

	if (isatty(STDOUT_FILENO))
		tcdrain(STDOUT_FILENO);
	sync();
	if (ioperm(DEBUG_EXIT_PORT, 4, 1) == 0)
		outl(status, DEBUG_EXIT_PORT);
	perror("guest-exit: isa-debug-exit");
	reboot(RB_AUTOBOOT);
	return 1;
}
