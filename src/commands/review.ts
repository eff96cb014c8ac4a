import {oneShotCommand} from '../cli/oneshot-command.js'

export default oneShotCommand('review', 'Run a fresh-eyes review (exit 10 when it found issues)')
