#!/usr/bin/env node
// A command agent for the SPEC 19 fleet tests. Implementation: logs its start and
// end (host, bead, time) to $FLEET_LOG, sleeps $FLEET_SLEEP_MS, commits one file
// named after the bead in its cwd, and closes the bead with the real CLI (fenced
// by HELIX_CLAIM_TOKEN, in the tracker DDX_BEAD_DIR names), then waits at the
// optional barrier (FLEET_BARRIER_DIR, FLEET_BARRIER_N). Check: NEXT_ACTION: STOP.
import {execFileSync} from 'node:child_process'
import {appendFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

const prompt = readFileSync(0, 'utf8')
const first = prompt.split('\n', 1)[0] ?? ''
const bead = process.env.HELIX_BEAD_ID ?? ''
const host = process.env.HELIX_HOST ?? 'host'
const log = (event) => {
  if (process.env.FLEET_LOG) appendFileSync(process.env.FLEET_LOG, JSON.stringify({event, host, bead, pid: process.pid, t: Date.now()}) + '\n')
}
if (!/implementation/i.test(first) || !bead) {
  console.log('NEXT_ACTION: STOP')
  process.exit(0)
}
log('start')
process.on('SIGTERM', () => {
  log('stopped')
  process.exit(143)
})
// work in progress, uncommitted while the agent "thinks": a stopped attempt keeps it on its preserved ref
mkdirSync('work', {recursive: true})
writeFileSync(path.join('work', `${bead}.partial`), `started by ${host}\n`)
await new Promise((r) => setTimeout(r, Number(process.env.FLEET_SLEEP_MS ?? 200)))
const env = {...process.env, GIT_AUTHOR_NAME: 'agent', GIT_AUTHOR_EMAIL: 'agent@example.com', GIT_COMMITTER_NAME: 'agent', GIT_COMMITTER_EMAIL: 'agent@example.com'}
mkdirSync('work', {recursive: true})
writeFileSync(path.join('work', `${bead}.txt`), `done by ${host}\n`)
execFileSync('git', ['add', '-A'], {env, stdio: 'ignore'})
execFileSync('git', ['commit', '-q', '-m', `work on ${bead}`], {env, stdio: 'ignore'})
execFileSync(process.execPath, [process.env.FLEET_HELIX, 'tracker', 'close', bead], {env: {...env, NODE_ENV: 'production'}, stdio: 'inherit'})
log('end')
// a barrier: with FLEET_BARRIER_DIR and FLEET_BARRIER_N, wait until the group of N agents this one
// belongs to (the 1st N to arrive, the next N, …) have committed and closed, so that their hosts land at about the same moment (issue 26's races)
const barrier = process.env.FLEET_BARRIER_DIR
if (barrier) {
  const n = Number(process.env.FLEET_BARRIER_N ?? 1)
  mkdirSync(barrier, {recursive: true})
  writeFileSync(path.join(barrier, `${host}-${bead}-${process.pid}`), '')
  const deadline = Date.now() + Number(process.env.FLEET_BARRIER_MS ?? 120_000)
  // rounds: the k-th agent to arrive waits for the whole group of n it belongs to
  const target = Math.ceil(readdirSync(barrier).length / n) * n
  while (readdirSync(barrier).length < target && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25))
}
console.log(`closed ${bead}`)
