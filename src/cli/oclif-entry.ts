/**
 * bin/run.js's way into oclif. The build bundles this file with every command
 * (scripts/bundle.mjs), so the `execute` it exports comes from the same copy of
 * @oclif/core that the bundled commands extend.
 */
export {execute} from '@oclif/core'
