/**
 * `troupe/text`: how troupe reads model output and files — line ends, the
 * one fence scanner, and the JSON search every reader uses (see
 * docs/reading.md).
 * @module troupe/text
 * @category Primitives
 */
export { normalizeText } from './lines.js';
export { PROMPT_HEADINGS } from './headings.js';
export { NameMatcher, nameKey, sameName, type NameMatch } from './names.js';
export { fencedBlocks, scanLines, type Fence, type FencedBlock, type LineKind, type ScannedLine } from './fences.js';
export {
  MAX_JSON_CANDIDATES,
  MAX_JSON_DEPTH,
  MAX_REPAIR_CHARS,
  findJson,
  safeFindJson,
  type FindJsonOptions,
  type FoundJson,
  type JsonIssue,
  type JsonKind,
  type JsonSource,
  type JsonValidator,
} from './json.js';
