import {oneShotCommand} from '../cli/oneshot-command.js'

export default oneShotCommand('polish', 'Run one polish pass over the tracker for a scope')
