import {oneShotCommand} from '../cli/oneshot-command.js'

export default oneShotCommand('check', 'Ask the check agent what should happen next; prints NEXT_ACTION (exit 0 only with a valid trailer)')
