// What the sandbox end-to-end tests share: whether bubblewrap can make a sandbox here,
// the rig's git (test/support/git.ts) and shell quoting for the scripted agents.
import {spawnSync} from 'node:child_process'

export {git as g} from '../support/git.js'

/** bubblewrap is installed and may make a sandbox (the tests skip where it may not) */
export const hasBwrap = spawnSync('bwrap', ['--ro-bind', '/', '/', 'true']).status === 0

/** `s` as one single-quoted word of a sh script */
export const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`
