/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Macros for spatch (see apply_entry in scripts/lib.sh): constructs of
 * the kernel that Coccinelle cannot parse on its own, given a shape it
 * can.  Only parsing depends on them; the output keeps the original code.
 */
/*
 * A statement followed by its block, like list_for_each_entry(): parsed
 * as an iterator, so that a rule may remove code that contains one.
 */
#define scoped_guard(_name, args...) YACFE_ITERATOR
