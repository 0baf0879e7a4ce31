# SPDX-License-Identifier: GPL-2.0
# The harness's unit tests (test_*.py): see common.py.
