/**
 * SPEC 15.4 end to end: a real `helix run --workers 2 --summary` in a git repo writes one
 * session log whose dispatch records carry `slot` and `bead`; each summary pointer reads
 * `log LA–LB (wN) in <path>`, and pasting it into `helix logs --lines` prints exactly
 * that slot's records of the range. The run is the built CLI (its agents call `helix status` and
 * `helix tracker close` through the PATH shim while it runs); `helix logs` runs in-process.
 */
import {execFileSync} from 'node:child_process'
import {chmodSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {makeTempDir} from '../support/tmp.js'
import {runCli} from '../support/cli.js'
import {helixInProcess} from '../support/in-process.js'
import {GIT_ISOLATION, gitSeq} from '../support/git.js'


/** both agents print before and after a pause, so the two slots' records interleave */
const AGENT = `#!/bin/sh
cat >/dev/null
if [ "$HELIX_ACTION" = implementation ]; then
  echo "start $HELIX_BEAD_ID"
  sleep 0.6
  echo "$HELIX_BEAD_ID" > "$HELIX_BEAD_ID.txt"
  git add "$HELIX_BEAD_ID.txt" && git commit -q -m "work on $HELIX_BEAD_ID" || exit 1
  echo "middle $HELIX_BEAD_ID"
  echo $$ > "$WSTUB/$HELIX_BEAD_ID.pid"
  (cd "$WSTUB/repo" && helix status --json > "$WSTUB/$HELIX_BEAD_ID.status.json")
  sleep 0.6
  helix tracker close "$HELIX_BEAD_ID" >/dev/null || exit 1
  echo "end $HELIX_BEAD_ID"
else
  echo "NEXT_ACTION: STOP"
fi
`

describe('helix run --workers 2: per-slot log pointers', () => {
  it("each pointer names its slot and helix logs prints exactly that slot’s records; status showed each agent's pid", async () => {
    const base = makeTempDir('helix-slots-')
    const root = path.join(base, 'repo')
    mkdirSync(path.join(root, '.ddx'), {recursive: true})
    gitSeq(root, ['init', '-q', '-b', 'main'], ['config', 'user.email', 'op@example.com'], ['config', 'user.name', 'Operator'])
    const beads = ['hx-a', 'hx-b'].map((id, i) => JSON.stringify({id, title: `bead ${id}`, status: 'open', priority: 2, issue_type: 'task', created_at: `2026-01-01T00:00:0${i}Z`}))
    writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), beads.join('\n') + '\n')
    writeFileSync(path.join(root, 'README.md'), 'readme\n')
    gitSeq(root, ['add', '-A'], ['commit', '-q', '-m', 'initial'])
    const agent = path.join(base, 'agent.sh')
    writeFileSync(agent, AGENT)
    chmodSync(agent, 0o755)
    // on top of the scrubbed environment (test/support/env.ts)
    const env = {...GIT_ISOLATION, WSTUB: base, HELIX_AUTO_ALIGN: '0', HELIX_BACKOFF_SLEEP: '0'}
    const r = runCli(['run', '--agent', agent, '--no-auto-review', '--workers', '2', '--summary'], {cwd: root, env})
    expect(r.code, r.stderr).toBe(0)

    const pointers = [...r.stderr.matchAll(/^helix: \[[\d:]+\] (w\d) \S+ complete \([^)]*\) — log (L\d+–L\d+ \((w\d)\)) in (\S+)$/gm)]
    expect(pointers).toHaveLength(2)
    // issue 29: the run says whether its tracker changes are left to commit in the checkout
    const dirty = execFileSync('git', ['status', '--porcelain', '--', '.ddx/beads.jsonl'], {cwd: root, encoding: 'utf8'}).trim() !== ''
    expect(dirty).toBe(true)
    expect(r.stderr).toContain("helix: .ddx/beads.jsonl has this run's tracker changes, not committed; commit them with your work")
    expect(pointers.map((m) => m[1]).sort()).toEqual(['w1', 'w2'])
    for (const m of pointers) expect(m[3]).toBe(m[1])
    const logFile = pointers[0][4]
    const recs = readFileSync(logFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>)
    // every record of an implementation dispatch names its slot and bead
    const implDispatches = new Set(recs.filter((x) => x.msg === 'dispatch' && x.action === 'implementation').map((x) => x.dispatch))
    expect(implDispatches.size).toBe(2)
    for (const x of recs.filter((x) => implDispatches.has(x.dispatch))) {
      expect(typeof x.slot).toBe('number')
      expect(x.bead).toMatch(/^hx-[ab]$/)
    }

    // the agents overlapped, so a range holds the other slot's records too: the filter has work to do
    const ranges = pointers.map((m) => ({slot: Number(m[3].slice(1)), lines: m[2].match(/\d+/g)!.map(Number)}))
    expect(ranges.some(({slot, lines: [a, b]}) => recs.slice(a - 1, b).some((x) => typeof x.slot === 'number' && x.slot !== slot))).toBe(true)

    // while each agent ran, status --json showed its pid in its slot's workers[] row (run-state workers[].pid)
    for (const id of ['hx-a', 'hx-b']) {
      const pid = Number(readFileSync(path.join(base, `${id}.pid`), 'utf8'))
      const st = JSON.parse(readFileSync(path.join(base, `${id}.status.json`), 'utf8'))
      expect(st.workers.find((w: {bead: string}) => w.bead === id)?.pid).toBe(pid)
    }

    for (const m of pointers) {
      const slot = Number(m[3].slice(1))
      const bead = recs.find((x) => x.slot === slot && x.msg === 'dispatch')!.bead as string
      const [from, to] = m[2].match(/\d+/g)!.map(Number)
      const out = await helixInProcess(root, ['logs', '--lines', `log ${m[2]} in ${logFile}`], env)
      expect(out.code, out.stderr).toBe(0)
      const shown = out.stdout.trimEnd().split('\n')
      // exactly the records of that slot in the range, with their own line numbers
      const expected = recs.map((x, i) => [x, i + 1] as const).filter(([x, n]) => n >= from && n <= to && x.slot === slot).map(([, n]) => `L${n}`)
      expect(shown.map((l) => l.split(/\s+/, 1)[0])).toEqual(expected)
      expect(out.stdout).toContain(`w${slot} │ start ${bead}`)
      expect(out.stdout).toContain(`w${slot} │ end ${bead}`)
      const other = bead === 'hx-a' ? 'hx-b' : 'hx-a'
      expect(out.stdout).not.toContain(other)
    }
  })
})
