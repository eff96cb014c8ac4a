// Several hosts, one queue (SPEC 19.6): claims per second and landings per minute
// against one local bare remote, with 2 and with 8 concurrent hosts (clones).
// - claims: every host walks the same list of bead ids and creates each claim ref
//   with `--force-with-lease=<ref>:`; a rejected push is a lost race, the host takes
//   the next id. claims/s = ids claimed / wall time (each id is claimed exactly once).
// - landings: every host claims a bead, makes a worktree from the remote tip, commits
//   one file and closes the bead in the worktree's tracker (what an agent does), then
//   lands with one atomic push (base fast-forward + claim deletion); a non-fast-forward
//   is fetched, rebased and retried. landings/min = beads landed / wall time.
// Uses the built modules in dist/ (npm run build first).
//   BENCH_REMOTE_CLAIMS (default 48) · BENCH_REMOTE_BEADS (default 16) · BENCH_REMOTE_HOSTS (default "2,8")
import {spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {pathToFileURL} from 'node:url'
import {repoRoot} from './lib.mjs'

const CLAIMS = Number(process.env.BENCH_REMOTE_CLAIMS ?? 48)
const BEADS = Number(process.env.BENCH_REMOTE_BEADS ?? 16)
const HOSTS = (process.env.BENCH_REMOTE_HOSTS ?? '2,8').split(',').map(Number)

const dist = (f) => pathToFileURL(path.join(repoRoot, 'dist', f)).href
if (!existsSync(path.join(repoRoot, 'dist', 'remote', 'claim-refs.js'))) {
  console.log('remote: skipped (this build has no dist/remote; run npm run build)')
  process.exit(0)
}
const {createClaims} = await import(dist('remote/claim-refs.js'))
const {createFleet} = await import(dist('remote/fleet.js'))
const {createRemoteLanding} = await import(dist('landing/remote.js'))
const {createGitLanding} = await import(dist('landing/local.js'))
const {closeBead} = await import(dist('tracker/ops.js'))

const env = {...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', LC_ALL: 'C'}
for (const k of Object.keys(env)) if (k.startsWith('HELIX_') || k.startsWith('DDX_')) delete env[k]
function git(cwd, ...args) {
  const r = spawnSync('git', args, {cwd, env, encoding: 'utf8'})
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`)
  return r.stdout.trim()
}

function makeRemote(beads) {
  const dir = mkdtempSync(path.join(tmpdir(), 'helix-remote-bench-'))
  const bare = path.join(dir, 'remote.git')
  git(dir, 'init', '-q', '--bare', '-b', 'main', bare)
  const seed = path.join(dir, 'seed')
  git(dir, 'init', '-q', '-b', 'main', seed)
  mkdirSync(path.join(seed, '.ddx'))
  const lines = beads.map((id) => JSON.stringify({id, title: `bench ${id}`, status: 'open', priority: 2, issue_type: 'task', created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z'}))
  writeFileSync(path.join(seed, '.ddx', 'beads.jsonl'), lines.join('\n') + (lines.length ? '\n' : ''))
  writeFileSync(path.join(seed, '.gitignore'), '.helix/\n.helix-logs/\n')
  git(seed, 'add', '-A')
  git(seed, '-c', 'user.name=seed', '-c', 'user.email=seed@example.com', 'commit', '-q', '-m', 'seed')
  git(seed, 'push', '-q', bare, 'main')
  const clone = (name) => {
    const c = path.join(dir, name)
    git(dir, 'clone', '-q', bare, c)
    git(c, 'config', 'user.name', name)
    git(c, 'config', 'user.email', `${name}@example.com`)
    return c
  }
  return {dir, bare, clone}
}

async function benchClaims(hosts) {
  const ids = Array.from({length: CLAIMS}, (_, i) => `hx-${String(i).padStart(4, '0')}`)
  const r = makeRemote([])
  try {
    const clients = Array.from({length: hosts}, (_, i) => createClaims({cwd: r.clone(`h${i}`), remote: 'origin', env, host: `h${i}`, run: `run-${i}`, pid: process.pid, leaseSec: 300, now: () => new Date()}))
    let won = 0
    let lost = 0
    const t0 = performance.now()
    await Promise.all(
      clients.map(async (c, i) => {
        // each host starts at its own offset, as hosts selecting by priority then racing would
        for (let k = 0; k < ids.length; k++) {
          const id = ids[(k + i * Math.floor(ids.length / hosts)) % ids.length]
          const res = await c.create(id, 1)
          if (res.ok) won++
          else lost++
        }
      }),
    )
    const s = (performance.now() - t0) / 1000
    const refs = git(r.bare, 'for-each-ref', '--format=%(refname)', 'refs/helix/claims/').split('\n').filter(Boolean).length
    if (refs !== CLAIMS || won !== CLAIMS) throw new Error(`claims: ${won} won, ${refs} refs for ${CLAIMS} ids`)
    return {perSec: won / s, lost, s}
  } finally {
    rmSync(r.dir, {recursive: true, force: true})
  }
}

async function benchLandings(hosts) {
  const ids = Array.from({length: BEADS}, (_, i) => `hx-${String(i).padStart(4, '0')}`)
  const r = makeRemote(ids)
  try {
    const made = Array.from({length: hosts}, (_, i) => {
      const root = r.clone(`h${i}`)
      const scratch = path.join(root, '.git', 'helix-remote')
      const fleet = createFleet({root, remote: 'origin', base: 'main', trackerRel: '.ddx/beads.jsonl', scratch, env, host: `h${i}`, runId: `run-${i}`, pid: process.pid, leaseSec: 300, maxOfflineSec: 3600, now: () => new Date(), log: () => {}, pidAlive: () => true, onMaxOffline: () => {}})
      const local = createGitLanding({root, trackerDir: path.join(root, '.ddx'), env, now: () => new Date()})
      const landing = createRemoteLanding({root, top: root, prefix: '', remote: 'origin', base: 'main', trackerRel: '.ddx/beads.jsonl', scratch, host: `h${i}`, pid: process.pid, fleet, local, now: () => new Date(), log: () => {}})
      return {fleet, landing}
    })
    let landed = 0
    let notLanded = 0
    const reasons = []
    const t0 = performance.now()
    await Promise.all(
      made.map(async ({fleet, landing}, i) => {
        for (;;) {
          const snap = await fleet.tracker.read()
          const open = snap.beads.filter((b) => b.status === 'open')
          if (open.length === 0) return
          const target = open[i % open.length]
          const c = await fleet.tracker.claim(target.id)
          if (!c.ok) continue
          const ws = await landing.prepare(target.id, 1, 1)
          writeFileSync(path.join(ws.dir, `${target.id}.txt`), 'work\n')
          git(ws.dir, 'add', '-A')
          git(ws.dir, 'commit', '-q', '-m', `work on ${target.id}`)
          const dir = ws.trackerDir
          await closeBead({root: ws.dir, dir, file: path.join(dir, 'beads.jsonl'), lockDir: path.join(dir, 'beads.lock')}, target.id, {claimToken: c.token, targetId: target.id})
          const res = await landing.land(ws)
          if (res.landed) landed++
          else {
            notLanded++
            reasons.push(`${target.id}: ${res.reason}`)
          }
        }
      }),
    )
    const s = (performance.now() - t0) / 1000
    for (const m of made) await m.fleet.close()
    const closed = git(r.bare, 'show', 'main:.ddx/beads.jsonl').split('\n').filter((l) => l.includes('"closed"')).length
    // a bead whose landing lost the race MAX_ROUNDS times is put in backoff (helix-retry-after,
    // SPEC 19.6) and left for later: that is the product working, not a bench failure. Anything
    // else (a bead neither closed at the tip nor in backoff, or a count that does not add up) is.
    const tipBeads = git(r.bare, 'show', 'main:.ddx/beads.jsonl').split('\n').filter(Boolean).map((l) => JSON.parse(l))
    const deferred = tipBeads.filter((b) => b.status !== 'closed' && typeof b['helix-retry-after'] === 'string').length
    if (closed !== landed || closed + deferred !== BEADS) {
      const left = tipBeads.filter((b) => b.status !== 'closed').map((b) => `${b.id} ${b.status}`)
      throw new Error(`landings: ${landed} landed, ${closed} closed at the tip, ${deferred} in backoff for ${BEADS} beads; not landed: ${reasons.join('; ')}; left: ${left.join('; ')}`)
    }
    return {perMin: (landed / s) * 60, notLanded, deferred, s}
  } finally {
    rmSync(r.dir, {recursive: true, force: true})
  }
}

const rows = []
for (const h of HOSTS) {
  const c = await benchClaims(h)
  const l = await benchLandings(h)
  rows.push({h, c, l})
  console.log(`remote: ${h} host(s): ${c.perSec.toFixed(1)} claims/s (${CLAIMS} ids, ${c.lost} lost races, ${c.s.toFixed(1)} s) · ${l.perMin.toFixed(1)} landings/min (${BEADS} beads, ${l.notLanded} attempts not landed, ${l.deferred} left in backoff, ${l.s.toFixed(1)} s)`)
}
if (rows.length > 1) {
  const a = rows[0]
  const b = rows[rows.length - 1]
  console.log(`remote: from ${a.h} to ${b.h} hosts: claims/s ×${(b.c.perSec / a.c.perSec).toFixed(2)}, landings/min ×${(b.l.perMin / a.l.perMin).toFixed(2)}`)
}
