/**
 * Turning raw agent output into what people see and what helix parses
 * (SPEC 3: codex boilerplate condensed, claude stream-json decoded, tokens).
 *
 * Every decoder is fed one output line at a time and answers with
 *   log:  the lines to record in the session log (one record each)
 *   show: the condensed lines for the terminal (normal mode)
 * and accumulates the final text trailers are parsed from, plus the token count.
 *
 * One module per agent: decode-command.ts, decode-codex.ts, decode-claude.ts; what
 * they share is in decoder.ts. This module is their one entry point.
 */
export {parseTokenCount, type DecodedLine, type DecoderOptions, type DecoderVerdict, type OutputDecoder} from './decoder.js'
export {commandDecoder} from './decode-command.js'
export {codexDecoder} from './decode-codex.js'
export {claudeDecoder} from './decode-claude.js'
