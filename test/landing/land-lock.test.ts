import {spawn, type ChildProcess} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {createLandLock} from '../../src/git/land-lock.js'
import {makeTempDir} from '../support/tmp.js'

const dirs: string[] = []
const kids: ChildProcess[] = []
afterEach(() => {
  for (const k of kids.splice(0)) k.kill('SIGKILL')
  for (const d of dirs.splice(0)) rmSync(d, {recursive: true, force: true})
})

function lockDir(): string {
  const d = makeTempDir('helix-landlock-')
  dirs.push(d)
  return path.join(d, 'helix-land.lock')
}

function holdBy(dir: string, pid: number, started: string): void {
  mkdirSync(dir)
  writeFileSync(path.join(dir, 'owner'), `${pid} ${started}\n`)
}

describe('land lock', () => {
  it('writes its owner while held and removes the directory on release', async () => {
    const dir = lockDir()
    const release = await createLandLock(dir).acquire()
    expect(readFileSync(path.join(dir, 'owner'), 'utf8')).toMatch(new RegExp(`^${process.pid} \\d{4}-`))
    await release()
    expect(existsSync(dir)).toBe(false)
  })

  it('serializes callers in one process: the second waits for the first release', async () => {
    const lock = createLandLock(lockDir())
    const order: string[] = []
    const r1 = await lock.acquire()
    const second = lock.acquire().then((r) => {
      order.push('second acquired')
      return r
    })
    await new Promise((r) => setTimeout(r, 100))
    order.push('first releases')
    await r1()
    await (await second)()
    expect(order).toEqual(['first releases', 'second acquired'])
  })

  it('waits for a live holder in another process and gives up with a one-line error', async () => {
    const dir = lockDir()
    const started = new Date().toISOString()
    const kid = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], {stdio: 'ignore'})
    kids.push(kid)
    holdBy(dir, kid.pid!, started)
    await expect(createLandLock(dir, {waitMs: 300, pollMs: 20}).acquire()).rejects.toThrow(new RegExp(`^helix: land lock .* held by pid ${kid.pid} for more than 0 s$`))
    expect(existsSync(dir)).toBe(true)
  })

  it('gets the lock as soon as the other process releases it', async () => {
    const dir = lockDir()
    const kid = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], {stdio: 'ignore'})
    kids.push(kid)
    holdBy(dir, kid.pid!, new Date().toISOString())
    const pending = createLandLock(dir, {waitMs: 10_000, pollMs: 20}).acquire()
    setTimeout(() => rmSync(dir, {recursive: true, force: true}), 150)
    const release = await pending
    expect(readFileSync(path.join(dir, 'owner'), 'utf8')).toMatch(new RegExp(`^${process.pid} `))
    await release()
  })

  it('takes over a lock whose holder is dead', async () => {
    const dir = lockDir()
    const kid = spawn(process.execPath, ['-e', '0'], {stdio: 'ignore'})
    const pid = kid.pid!
    await new Promise((r) => kid.on('exit', r))
    holdBy(dir, pid, new Date().toISOString())
    const release = await createLandLock(dir, {waitMs: 300}).acquire()
    expect(readFileSync(path.join(dir, 'owner'), 'utf8')).toMatch(new RegExp(`^${process.pid} `))
    await release()
  })
})
