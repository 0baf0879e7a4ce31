/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Macros for spatch (see apply_entry in scripts/lib.sh): constructs of
 * the kernel that Coccinelle cannot parse on its own, given a shape it
 * can.  Only parsing depends on them; the output keeps the original code.
 */
#define scoped_guard(_name, args...) for (;;)
