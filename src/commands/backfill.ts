import {oneShotCommand} from '../cli/oneshot-command.js'

export default oneShotCommand('backfill', 'Run one backfill pass: reconstruct missing specs and designs from the code')
