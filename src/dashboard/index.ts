/**
 * `helix dashboard` (SPEC 22.1): checks its flags (bad input is one line, exit 1,
 * before anything listens), finds the projects, starts the shared state (`Hub`) and
 * serves it on 127.0.0.1 (or `--listen` with a token). Lives until SIGINT/SIGTERM.
 */
import {networkInterfaces, hostname} from 'node:os'
import {isIP} from 'node:net'
import type {Server} from 'node:http'
import {findProjectRoot, NOT_A_PROJECT} from '../util/root.js'
import {HelixError, EXIT} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import {git} from '../git/run.js'
import {fleetView} from '../operator/fleet.js'
import {Hub} from './hub.js'
import {ProjectReader} from './project-view.js'
import {fleetRunsOf} from './fleet-runs.js'
import type {History} from '../report/summary.js'
import {createDashboardServer} from './server.js'
import {watchProject} from './watch.js'

export const DEFAULT_PORT = 7420
/** How far past 7420 a free port is looked for without `--port`. */
const PORT_TRIES = 100

export interface DashboardOptions {
  cwd: string
  env: NodeJS.ProcessEnv
  port?: string
  listen?: string
  token?: string
  projects?: string[]
  remote?: string
  open?: boolean
  /** where the one address line goes */
  print: (line: string) => void
}

export interface RunningDashboard {
  url: string
  port: number
  hub: Hub
  server: Server
  close(): Promise<void>
}

function parsePort(text: string): number {
  const t = text.trim()
  if (!/^\d{1,5}$/.test(t) || Number(t) > 65535) throw new HelixError(`invalid --port '${sanitize(text).slice(0, 40)}': expected a port number 1–65535 (0: any free port)`, EXIT.ERROR)
  return Number(t)
}

function listenAddress(text: string): string {
  const t = text.trim().replace(/^\[(.*)\]$/, '$1')
  if (isIP(t) === 0 && t !== 'localhost') throw new HelixError(`invalid --listen '${sanitize(text).slice(0, 60)}': expected an IP address, e.g. 0.0.0.0 or 192.168.1.10`, EXIT.ERROR)
  return t
}

/** Host names a wildcard listener may be reached by: this machine's name and addresses. */
function machineHosts(): string[] {
  const out = [hostname()]
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) out.push(a.address)
  return out
}

function listenOn(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      server.off('listening', onListening)
      reject(error)
    }
    const onListening = () => {
      server.off('error', onError)
      const a = server.address()
      resolve(typeof a === 'object' && a ? a.port : port)
    }
    server.once('error', onError)
    server.once('listening', onListening)
    server.listen(port, host)
  })
}

export async function startDashboard(o: DashboardOptions): Promise<RunningDashboard> {
  // bad input first: nothing listens before every flag is known good
  const explicitPort = o.port === undefined ? null : parsePort(o.port)
  const token = o.token ?? (o.env.HELIX_DASHBOARD_TOKEN || undefined)
  if (o.token !== undefined && o.token.trim() === '') throw new HelixError('--token needs a value (or set HELIX_DASHBOARD_TOKEN)', EXIT.ERROR)
  let host = '127.0.0.1'
  const extraHosts: string[] = []
  if (o.listen !== undefined) {
    host = listenAddress(o.listen)
    if (!token) throw new HelixError(`--listen ${sanitize(o.listen)} needs --token T (or HELIX_DASHBOARD_TOKEN): every request must carry it`, EXIT.ERROR)
    extraHosts.push(host)
    if (host === '0.0.0.0' || host === '::') extraHosts.push(...machineHosts())
  }
  const remote = o.remote?.trim()
  if (remote !== undefined && !/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(remote)) throw new HelixError(`invalid --remote '${sanitize(o.remote).slice(0, 60)}': expected a git remote name`, EXIT.ERROR)
  const dirs = o.projects && o.projects.length ? o.projects : [o.cwd]
  const roots: string[] = []
  for (const d of dirs) {
    let root: string
    try {
      root = findProjectRoot(d, o.projects && o.projects.length ? {} : o.env)
    } catch {
      throw new HelixError(o.projects && o.projects.length ? `--project ${sanitize(d)}: ${NOT_A_PROJECT}` : NOT_A_PROJECT, EXIT.ERROR)
    }
    if (!roots.includes(root)) roots.push(root)
  }
  if (remote !== undefined) {
    for (const root of roots) {
      const r = await git(['remote', 'get-url', remote], {cwd: root, env: o.env})
      if (r.code !== 0) throw new HelixError(`--remote ${sanitize(remote)}: no such git remote in ${sanitize(root)} (see 'git remote -v')`, EXIT.ERROR)
    }
  }

  const readers = roots.map((root, i) => new ProjectReader(i, root, o.env))
  const hub = new Hub({
    projects: readers.map((r) => ({root: r.root, read: (now: Date) => r.read(now), setFleetRuns: (h: History) => (r.fleetRuns = h)})),
    watch: (root, onChange) => watchProject(root, onChange),
    ...(remote !== undefined ? {remote, fleetRead: (root: string) => fleetView({root, remote, env: o.env, leaseSec: 300}), fleetRuns: (root: string) => fleetRunsOf(root, remote, o.env)} : {}),
  })
  await hub.start()
  const {server, setPort} = createDashboardServer({hub, roots, token: token ?? null, extraHosts})
  let port: number
  if (explicitPort !== null) {
    try {
      port = await listenOn(server, explicitPort, host)
    } catch (error) {
      hub.close()
      const code = (error as NodeJS.ErrnoException).code
      throw new HelixError(code === 'EADDRINUSE' ? `port ${explicitPort} is taken: choose another with --port N (or leave --port out for the next free one)` : `cannot listen on ${sanitize(host)}:${explicitPort}: ${sanitize(code ?? (error as Error).message)}`, EXIT.ERROR)
    }
  } else {
    port = -1
    for (let p = DEFAULT_PORT; p < DEFAULT_PORT + PORT_TRIES && port < 0; p++) {
      try {
        port = await listenOn(server, p, host)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') {
          hub.close()
          throw new HelixError(`cannot listen on ${sanitize(host)}:${p}: ${sanitize((error as NodeJS.ErrnoException).code ?? (error as Error).message)}`, EXIT.ERROR)
        }
      }
    }
    if (port < 0) {
      hub.close()
      throw new HelixError(`no free port in ${DEFAULT_PORT}–${DEFAULT_PORT + PORT_TRIES - 1}: choose one with --port N`, EXIT.ERROR)
    }
  }
  setPort(port)
  const shown = host.includes(':') ? `[${host}]` : host
  const url = `http://${shown}:${port}/`
  o.print(`helix: dashboard at ${url}`)
  if (o.open) openBrowser(token ? `${url}?token=${encodeURIComponent(token)}` : url)
  return {
    url,
    port,
    hub,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        hub.close()
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** `--open`: the system's opener, without a shell; a missing opener is not an error. */
function openBrowser(url: string): void {
  const {spawn} = process.getBuiltinModule('node:child_process') as typeof import('node:child_process')
  const cmd = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open'
  try {
    const child = spawn(cmd, [url], {detached: true, stdio: 'ignore'})
    child.on('error', () => undefined) // no opener installed: the address line is enough
    child.unref()
  } catch {
    // as above
  }
}
