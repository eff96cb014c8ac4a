// `npm run bench`: runs every benchmark in scripts/bench/*.bench.mjs in turn.
import {readdirSync} from 'node:fs'
import {spawnSync} from 'node:child_process'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'bench')
const only = process.argv[2]
let failed = 0
for (const name of readdirSync(dir).filter((f) => f.endsWith('.bench.mjs')).sort()) {
  if (only && !name.includes(only)) continue
  console.log(`== ${name}`)
  const r = spawnSync(process.execPath, [path.join(dir, name)], {stdio: 'inherit'})
  if (r.status !== 0) failed++
}
process.exit(failed ? 1 : 0)
