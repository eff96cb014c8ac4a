import {oneShotCommand} from '../cli/oneshot-command.js'

export default oneShotCommand('alignment', 'Run one alignment pass: reconcile code, specs and tracker')
