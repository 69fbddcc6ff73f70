#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
# Copyright (C) 2026 The gradcheck authors
# tap-awk.sh AWK ARG...: run automake's TAP driver's awk program so that a
# test's .log grows while the test runs.  The driver copies every line of
# the test's output to the log through a pipe (print | "cat >&3") that awk
# buffers until it exits, so a long test's log stayed empty for minutes.
# Here a flush follows each such copy, and mawk (Debian's awk) is told to
# read its input line by line (-W interactive).  The driver is unchanged:
# if its program ever stops matching, the lines are copied as before.
awk=$1; shift
case $("$awk" -W version 2>&1 | head -1) in
  mawk*) interactive="-W interactive" ;;
  *) interactive= ;;
esac
last=$#
i=0
for a in "$@"; do
  i=$((i + 1))
  [ "$i" -eq 1 ] && set --
  if [ "$i" -eq "$last" ]; then
    a=$(printf '%s\n' "$a" \
        | sed 's/| "cat >&3";\{0,1\}[ 	]*$/| "cat >\&3"; fflush("cat >\&3");/')
  fi
  set -- "$@" "$a"
done
# shellcheck disable=SC2086
exec "$awk" $interactive "$@"
