/** The body of `helix status --remote <name> [--lease S] [--json]` (SPEC 19.5), kept out of the oclif command. */
import {HelixError, EXIT} from '../util/errors.js'
import {projectPaths} from '../util/root.js'
import {sanitize} from '../util/sanitize.js'
import {fleetView, renderFleet} from './fleet.js'

export async function fleetStatus(f: {remote?: string; lease?: string; json?: boolean; width?: number; height?: number}, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  if (f.remote === undefined) throw new HelixError('--lease needs --remote <name>', EXIT.ERROR)
  let lease = 300
  if (f.lease !== undefined) {
    const t = f.lease.trim()
    if (!/^\d{1,7}$/.test(t) || Number(t) < 1) throw new HelixError(`invalid --lease '${sanitize(f.lease).slice(0, 40)}': expected seconds, a whole number ≥ 1`, EXIT.ERROR)
    lease = Number(t)
  }
  const root = projectPaths(process.cwd(), env).root
  const view = await fleetView({root, remote: f.remote.trim(), env, leaseSec: lease})
  return f.json ? JSON.stringify(view, null, 2) + '\n' : renderFleet(view, {width: f.width, height: f.height})
}
