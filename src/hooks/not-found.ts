/**
 * oclif `command_not_found` hook: an unknown command or topic, or an argument given to
 * a command that takes none, is bad input, so it gets one line (with a did-you-mean for
 * an unknown command) and exit 1. (Exit 2 means busy, nothing else.)
 */
import type {Hook} from '@oclif/core/hooks'
import {EXIT} from '../util/errors.js'
import {notFoundLine} from '../cli/unknown-command.js'

const hook: Hook<'command_not_found'> = async function (opts) {
  process.stderr.write(notFoundLine(opts.id.split(':'), opts.config) + '\n')
  this.exit(EXIT.ERROR)
}

export default hook
