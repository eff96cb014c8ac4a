/**
 * `helix help [COMMAND]`. The command @oclif/plugin-help provides, kept here so that
 * oclif loads no plugin at start-up (a plugin costs a package.json, a manifest and a
 * dependency scan on every run of every command). Unlike the plugin's, an
 * unknown command is one line and exit 1, as everywhere else.
 */
import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {loadHelpClass} from '@oclif/core/help'
import {HelixCommand} from '../cli/base-command.js'
import {HelixError, EXIT} from '../util/errors.js'
import {knownCommands, unknownCommandLine} from '../cli/unknown-command.js'

export default class Help extends HelixCommand {
  static override description = 'Display help for <%= config.bin %>.'
  static override strict = false
  static override args = {
    command: Args.string({description: 'Command to show help for.', required: false}),
  }

  static override flags = {
    'nested-commands': Flags.boolean({char: 'n', description: 'Include all nested commands in the output.'}),
  }

  async run(): Promise<void> {
    const {argv, flags} = await this.parse(Help)
    const words = (argv as string[]).filter((w) => !w.startsWith('-'))
    const id = words.join(':')
    if (id && !this.config.findCommand(id) && !this.config.findTopic(id)) {
      throw new HelixError(unknownCommandLine(words.join(' '), knownCommands(this.config)), EXIT.ERROR)
    }
    const HelpClass = await loadHelpClass(this.config)
    await new HelpClass(this.config, {all: flags['nested-commands']}).showHelp(argv as string[])
  }
}
