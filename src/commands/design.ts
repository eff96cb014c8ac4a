import {oneShotCommand} from '../cli/oneshot-command.js'

export default oneShotCommand('plan', 'Run one plan pass: designs and implementable beads for a scope')
