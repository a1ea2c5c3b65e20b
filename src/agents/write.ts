/**
 * Writing a definition as an agent file of any format, so that a team
 * designed in troupe can be used in the editor of each tool.
 * @module
 */
import { ConfigurationError, describeValue } from '../core/errors.js';
import { AGENT_FORMATS, type AgentDefinition, type AgentFormat } from './definition.js';
import { agentFormats, type AgentFileOutput } from './formats/index.js';

/**
 * Write `def` as a file of `format` (default: the format it was read from,
 * else troupe's): the text, the file name that format's tool expects, and a
 * warning for every field the format has no place for. Reading the text
 * back (with the file name for formats that take the name from it) gives
 * the same definition for every field the format holds.
 *
 * @example
 * ```ts
 * const { text, fileName } = writeAgentFile(defineAgent({ name: 'reviewer', tools: ['Read', 'Grep'] }), 'claude-code');
 * // fileName: 'reviewer.md'; text: '---\nname: reviewer\ntools: Read, Grep\n---\n\n\n'
 * ```
 */
export function writeAgentFile(def: AgentDefinition, format?: AgentFormat): AgentFileOutput {
  if (def === null || typeof def !== 'object' || typeof def.name !== 'string') {
    throw new ConfigurationError(`Expected an agent definition, got ${describeValue(def)}`, { code: 'invalid_argument' });
  }
  const target = format ?? def.format ?? 'troupe';
  if (!(AGENT_FORMATS as readonly string[]).includes(target)) {
    throw new ConfigurationError(`Expected a format (${AGENT_FORMATS.join(', ')}), got ${describeValue(target)}`, { code: 'invalid_argument' });
  }
  return agentFormats[target].write(def);
}
