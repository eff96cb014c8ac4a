#!/usr/bin/env node
// A command agent for the --land pr resolve tests (SPEC 20.4 on a pull request).
// PR_AGENT_GATE / PR_AGENT_GATE_BEAD: that bead's implementation writes <gate>.waiting and waits for the gate file.
// Every call appends {action, bead, cwd, log, tracker} to $PR_AGENT_LOG (`log`: the first
// line of .helix/land-check.log when there is one; `tracker`: the bead's status in DDX_BEAD_DIR).
//  - implementation: writes shared.txt = "<bead>" (so two beads' pull requests
//    conflict outside the tracker), commits, closes the bead with the real CLI.
//  - resolve: PR_AGENT_RESOLVE=none does nothing. Otherwise a rebase in progress is
//    finished by keeping both sides of every conflict block (`git rebase --continue`
//    until done); with no rebase in progress (a failing check) it commits fix.txt.
//  - anything else: NEXT_ACTION: STOP.
import {execFileSync, spawnSync} from 'node:child_process'
import {appendFileSync, existsSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

const prompt = readFileSync(0, 'utf8')
const first = prompt.split('\n', 1)[0] ?? ''
const bead = process.env.HELIX_BEAD_ID ?? ''
const env = {...process.env, GIT_AUTHOR_NAME: 'agent', GIT_AUTHOR_EMAIL: 'agent@example.com', GIT_COMMITTER_NAME: 'agent', GIT_COMMITTER_EMAIL: 'agent@example.com', GIT_EDITOR: 'true'}
const git = (...a) => execFileSync('git', a, {env, encoding: 'utf8'}).trim()
const gitPath = (p) => path.resolve(git('rev-parse', '--git-path', p))
const action = /resolve action/i.test(first) ? 'resolve' : /implementation/i.test(first) ? 'implementation' : 'other'
const logFile = path.join('.helix', 'land-check.log')
// `tracker`: the bead's status in the tracker the agent was given (DDX_BEAD_DIR), when it has one
const trackerFile = process.env.DDX_BEAD_DIR ? path.join(process.env.DDX_BEAD_DIR, 'beads.jsonl') : ''
const tracker = trackerFile && existsSync(trackerFile) ? (readFileSync(trackerFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).find((b) => b.id === bead)?.status ?? null) : null
const record = {action, bead, env_action: process.env.HELIX_ACTION ?? null, cwd: process.cwd(), log: existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n')[0] : null, tracker}
if (process.env.PR_AGENT_LOG) appendFileSync(process.env.PR_AGENT_LOG, JSON.stringify(record) + '\n')

if (action === 'implementation' && bead) {
  // PR_AGENT_GATE_BEAD waits for the file PR_AGENT_GATE (the test merges another pull request meanwhile)
  if (process.env.PR_AGENT_GATE && bead === process.env.PR_AGENT_GATE_BEAD) {
    writeFileSync(`${process.env.PR_AGENT_GATE}.waiting`, '')
    const until = Date.now() + 60_000
    while (!existsSync(process.env.PR_AGENT_GATE) && Date.now() < until) await new Promise((r) => setTimeout(r, 50))
  }
  writeFileSync('shared.txt', `${bead}\n`)
  git('add', 'shared.txt')
  git('commit', '-q', '-m', `work on ${bead}`)
  execFileSync(process.execPath, [process.env.FLEET_HELIX, 'tracker', 'close', bead], {env: {...env, NODE_ENV: 'production'}, stdio: 'inherit'})
  console.log(`closed ${bead}`)
} else if (action === 'resolve') {
  if (process.env.PR_AGENT_RESOLVE === 'none') process.exit(0)
  const inRebase = () => existsSync(gitPath('rebase-merge')) || existsSync(gitPath('rebase-apply'))
  if (inRebase()) {
    for (let i = 0; i < 20 && inRebase(); i++) {
      const files = git('diff', '--name-only', '--diff-filter=U').split('\n').filter(Boolean)
      for (const f of files) {
        const kept = readFileSync(f, 'utf8')
          .split('\n')
          .filter((l) => !/^(<<<<<<< |=======|>>>>>>> )/.test(l))
        writeFileSync(f, kept.join('\n'))
        git('add', '--', f)
      }
      spawnSync('git', ['rebase', '--continue'], {env, encoding: 'utf8'})
    }
    console.log('resolved the conflict')
  } else {
    writeFileSync('fix.txt', 'the check passes now\n')
    git('add', 'fix.txt')
    git('commit', '-q', '-m', `fix the check of ${bead}`)
    console.log('fixed the check')
  }
} else console.log('NEXT_ACTION: STOP')
