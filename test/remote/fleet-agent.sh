#!/bin/sh
# A command agent for the SPEC 19 fleet tests, in sh: it starts in ~2 ms of CPU where a node
# script took ~40 (the fleet tests start dozens). Implementation: logs its start and end
# (host, bead, pid, time in ms) to $FLEET_LOG, sleeps $FLEET_SLEEP_MS (a SIGTERM meanwhile
# logs "stopped" and exits 143), commits one file named after the bead in its cwd, closes the
# bead with the real CLI ($FLEET_HELIX, fenced by HELIX_CLAIM_TOKEN, in the tracker
# DDX_BEAD_DIR names) once the optional gate file FLEET_GATE exists, then waits at the optional barrier (FLEET_BARRIER_DIR,
# FLEET_BARRIER_N, FLEET_BARRIER_MS). Any other action: NEXT_ACTION: STOP.
# The tests' ids and host names are plain words, so the log's JSON needs no escaping.
prompt=$(cat)
nl='
'
first=${prompt%%"$nl"*}
bead=${HELIX_BEAD_ID:-}
host=${HELIX_HOST:-host}
case $first in
  *[Ii][Mm][Pp][Ll][Ee][Mm][Ee][Nn][Tt][Aa][Tt][Ii][Oo][Nn]*) ;;
  *) echo 'NEXT_ACTION: STOP'; exit 0 ;;
esac
[ -n "$bead" ] || { echo 'NEXT_ACTION: STOP'; exit 0; }
log() {
  [ -n "${FLEET_LOG:-}" ] || return 0
  printf '{"event":"%s","host":"%s","bead":"%s","pid":%s,"t":%s}\n' "$1" "$host" "$bead" "$$" "$(date +%s%3N)" >> "$FLEET_LOG"
}
log start
trap 'log stopped; exit 143' TERM
# work in progress, uncommitted while the agent "thinks": a stopped attempt keeps it on its preserved ref
mkdir -p work
echo "started by $host" > "work/$bead.partial"
ms=${FLEET_SLEEP_MS:-200}
# in the background and waited for, so that a SIGTERM runs the trap at once (dash's "Terminated"
# for the killed sleep goes nowhere: helix reads an agent's output, and a repeated line looks systemic)
sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))" &
wait $! 2>/dev/null
# an optional gate: with FLEET_GATE, finish only once that file exists (a test cuts the remote
# off first, then opens the gate, so the landing meets the cut however slow the machine is)
if [ -n "${FLEET_GATE:-}" ]; then
  tries=2400
  while [ ! -e "$FLEET_GATE" ] && [ "$tries" -gt 0 ]; do
    sleep 0.05
    tries=$((tries - 1))
  done
fi
export GIT_AUTHOR_NAME=agent GIT_AUTHOR_EMAIL=agent@example.com GIT_COMMITTER_NAME=agent GIT_COMMITTER_EMAIL=agent@example.com
echo "done by $host" > "work/$bead.txt"
git add -A > /dev/null 2>&1 || exit 1
git commit -q -m "work on $bead" > /dev/null 2>&1 || exit 1
NODE_ENV=production node "$FLEET_HELIX" tracker close "$bead" || exit 1
log end
# a barrier: with FLEET_BARRIER_DIR and FLEET_BARRIER_N, wait until the group of N agents this one
# belongs to (the 1st N to arrive, the next N, …) have committed and closed, so that their hosts
# land at about the same moment (issue 26's races); counted with the shell's own glob, no process
if [ -n "${FLEET_BARRIER_DIR:-}" ]; then
  n=${FLEET_BARRIER_N:-1}
  mkdir -p "$FLEET_BARRIER_DIR"
  : > "$FLEET_BARRIER_DIR/$host-$bead-$$"
  set -- "$FLEET_BARRIER_DIR"/*
  target=$(( ($# + n - 1) / n * n ))
  tries=$(( ${FLEET_BARRIER_MS:-120000} / 50 ))
  while [ "$#" -lt "$target" ] && [ "$tries" -gt 0 ]; do
    sleep 0.05
    tries=$((tries - 1))
    set -- "$FLEET_BARRIER_DIR"/*
  done
fi
echo "closed $bead"
