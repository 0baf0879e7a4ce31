// SPDX-License-Identifier: GPL-2.0
void ptsim_fake_hrtimer(void) {}
