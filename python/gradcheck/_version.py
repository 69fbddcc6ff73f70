# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
"""The package's version: the library's (AC_INIT in configure.ac), typed
here too so that pip can read it from a checkout without a build;
python/tests/test_install.py checks that the two agree."""

__version__ = "0.1.0"
