/**
 * The agent wrapper (SPEC 3, 14.5): one constant `/bin/sh` script that every
 * agent is started through, as `sh -c AGENT_WRAPPER <agent> <args…>`. The
 * agent's argv travels as positional parameters ("$0" "$@"), never as shell
 * text. It does two things Node cannot do for a child:
 *
 *  1. It starts the watchdog, a background subshell in the agent's own process
 *     group (Node can only put a child in a NEW group, never in an existing
 *     one). The watchdog polls helix (HELIX_RUN_PID, and its start token
 *     HELIX_RUN_START so a reused pid does not count) once a second. When helix
 *     is gone (kill -9, OOM), it sends SIGTERM to every process carrying the
 *     dispatch's HELIX_DISPATCH_ID and to the agent's group, waits up to 3 s,
 *     then SIGKILLs both, itself included: the agent ends within 1 + 3 s
 *     (+ scan time) of helix's death. While helix lives, helix ends the
 *     watchdog with the group when the dispatch ends (SIGTERM is not trapped
 *     until the cleanup begins). It costs one dash process (~1 MB) and one
 *     `sleep 1` a second. It unsets the tag for its own children, and skips
 *     its own pids (and those of its command substitutions), so it never finds
 *     itself.
 *  2. It execs the agent with fd 2 pointed at fd 1: stdout and stderr share
 *     ONE pipe, so their order is the order the agent wrote them in (two
 *     pipes, as execa's `all` merges them, can reorder lines).
 *
 * Linux needs /proc for the start-token check and the tag scan; without /proc
 * the watchdog falls back to `kill -0` on helix's pid and the group kill only.
 */
export const AGENT_WRAPPER = `if [ -n "$HELIX_RUN_PID" ] && [ -n "$HELIX_DISPATCH_ID" ]; then
(
  exec </dev/null >/dev/null 2>&1
  trap '' INT QUIT HUP
  agent=$$
  id=$HELIX_DISPATCH_ID
  unset HELIX_DISPATCH_ID
  me=
  read -r me _ </proc/self/stat
  helix_alive() {
    if [ -n "$me" ]; then
      read -r s <"/proc/$HELIX_RUN_PID/stat" || return 1
      s=\${s##*) }
      set -- $s
      [ "$1" != Z ] && [ "$1" != X ] || return 1
      [ -z "$HELIX_RUN_START" ] || [ "\${20}" = "$HELIX_RUN_START" ]
    else
      kill -0 "$HELIX_RUN_PID"
    fi
  }
  tagged() {
    [ -n "$me" ] || return 0
    read -r self _ </proc/self/stat
    for f in $(grep -lxzsF "HELIX_DISPATCH_ID=$id" /proc/[0-9]*/environ); do
      p=\${f#/proc/}
      p=\${p%/environ}
      [ "$p" = "$me" ] || [ "$p" = "$self" ] || printf '%s\\n' "$p"
    done
  }
  while helix_alive; do
    kill -0 "$agent" || exit 0
    sleep 1
  done
  trap '' TERM
  kill -TERM $(tagged)
  kill -TERM -"$agent"
  i=0
  while [ $i -lt 30 ] && [ -n "$(tagged)" ]; do
    sleep 0.1
    i=$((i + 1))
  done
  kill -KILL $(tagged)
  kill -KILL -"$agent"
) &
fi
exec "$0" "$@" 2>&1`
