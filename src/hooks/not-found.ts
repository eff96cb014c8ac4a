/**
 * oclif `command_not_found` hook: an unknown command or topic is bad input, so it
 * gets one line with a did-you-mean and exit 1. (Exit 2 means busy, nothing else.)
 */
import type {Hook} from '@oclif/core'
import {EXIT} from '../util/errors.js'
import {knownCommands, unknownCommandLine} from '../cli/unknown-command.js'

const hook: Hook<'command_not_found'> = async function (opts) {
  process.stderr.write(unknownCommandLine(opts.id.split(':').join(' '), knownCommands(opts.config)) + '\n')
  this.exit(EXIT.ERROR)
}

export default hook
