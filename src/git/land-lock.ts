/**
 * The land lock (SPEC 15.2): one landing at a time, in this process (a promise
 * queue) and across helix processes sharing the repository (a directory
 * `<git-common-dir>/helix-land.lock` made with an atomic `mkdir`, holding
 * `<pid> <ISO start>`). A lock whose holder is dead, or is a different process
 * that reused the pid, is stale and taken over. The critical section is short
 * (a rebase and a fast-forward), so a waiter polls.
 */
import {mkdir, readFile, rename, rm, stat, writeFile} from 'node:fs/promises'
import path from 'node:path'
import {abortableSleep} from '../util/abort.js'
import {pidAlive} from '../proc/process.js'
import {pidMatchesRecord} from '../proc/pid-identity.js'
import {isNotFound} from '../util/files.js'
import {HelixError, EXIT} from '../util/errors.js'

export interface LandLock {
  /** resolves with the release function once both locks are held; throws HelixError after `waitMs` */
  acquire(): Promise<() => Promise<void>>
}

/** a lock directory without an owner file is someone mid-acquire, or a crash between mkdir and write */
const OWNERLESS_STALE_MS = 10_000

const processStarted = new Date(Date.now() - process.uptime() * 1000).toISOString()

export function createLandLock(dir: string, opts: {waitMs?: number; pollMs?: number} = {}): LandLock {
  const waitMs = opts.waitMs ?? 120_000
  const pollMs = opts.pollMs ?? 50
  let queue: Promise<void> = Promise.resolve()

  async function stale(): Promise<{stale: boolean; holder: string}> {
    let text: string
    try {
      text = await readFile(path.join(dir, 'owner'), 'utf8')
    } catch (error) {
      // no owner file yet (the holder is between mkdir and write): ownerless, stale only when old.
      // An unreadable owner (EACCES, EIO) is not "ownerless": breaking that lock could land twice.
      if (!isNotFound(error)) throw error
      try {
        const st = await stat(dir)
        return {stale: Date.now() - st.mtimeMs > OWNERLESS_STALE_MS, holder: 'unknown'}
      } catch (error) {
        if (!isNotFound(error)) throw error
        return {stale: false, holder: 'unknown'} // released meanwhile: the next mkdir decides
      }
    }
    const [pidText, started = ''] = text.trim().split(/\s+/, 2)
    const pid = Number(pidText)
    const dead = !Number.isSafeInteger(pid) || pid <= 0 || !pidAlive(pid) || !pidMatchesRecord(pid, started)
    return {stale: dead, holder: `pid ${pidText}`}
  }

  async function takeFileLock(): Promise<void> {
    const deadline = Date.now() + waitMs
    await mkdir(path.dirname(dir), {recursive: true})
    for (;;) {
      try {
        await mkdir(dir)
        await writeFile(path.join(dir, 'owner'), `${process.pid} ${processStarted}\n`)
        return
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      }
      const s = await stale()
      if (s.stale) {
        // move it aside first: rename is atomic, so only one waiter removes it
        const aside = `${dir}.stale-${process.pid}-${Date.now()}`
        try {
          await rename(dir, aside)
          await rm(aside, {recursive: true, force: true})
        } catch {
          // another waiter took it over first
        }
        continue
      }
      if (Date.now() >= deadline) throw new HelixError(`helix: land lock ${dir} held by ${s.holder} for more than ${Math.round(waitMs / 1000)} s`, EXIT.ERROR)
      await abortableSleep(pollMs)
    }
  }

  return {
    acquire() {
      const turn = queue.then(async () => {
        await takeFileLock()
        let released = false
        return async () => {
          if (released) return
          released = true
          await rm(dir, {recursive: true, force: true})
        }
      })
      // the next caller waits for this one's release, not merely its acquire
      let releaseQueue: () => void = () => {}
      const held = new Promise<void>((r) => (releaseQueue = r))
      queue = turn.then(
        () => held,
        () => undefined,
      )
      return turn.then((release) => async () => {
        try {
          await release()
        } finally {
          releaseQueue()
        }
      })
    },
  }
}
