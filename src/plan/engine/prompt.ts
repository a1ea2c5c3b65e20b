/**
 * The prompt of a chunk's attempt: the chunk's own prompt, the results of
 * its dependencies, the instructions added while the plan runs, and the
 * previous attempt's error — for a merge conflict, the paths and the other
 * chunks' changes of them.
 * @module
 */
import type { Attempt } from './attempt.js';
import type { ChunkRecord } from './record.js';
import type { MergeConflict } from './types.js';
import { messageNote, type PlanMessage } from '../live/messages.js';

/** The full prompt of `attempt`, whose chunk depends on `dependencies`; `messages` are those other workers posted to it so far. */
export function chunkPrompt(attempt: Attempt, dependencies: readonly ChunkRecord[], instructions: readonly string[], reprompt: boolean, messages: readonly PlanMessage[] = []): string {
  const c = attempt.chunk;
  let prompt = `# Chunk ${c.sequenceIndex}: ${c.title}\n\n${c.prompt}`;
  if (dependencies.length > 0) {
    prompt += '\n\n## Results from dependencies';
    for (const d of dependencies) prompt += `\n\n### ${d.chunk.sequenceIndex}. ${d.chunk.title} (${d.chunk.role})\n\n${d.output ?? ''}`;
  }
  if (instructions.length > 0) prompt += `\n\n## Additional instructions from the user\n\n${instructions.map((x) => `- ${x}`).join('\n')}`;
  if (messages.length > 0) prompt += `\n\n${messageNote(messages)}`;
  const conflict = attempt.previousConflict;
  if (attempt.attempt > 1 && conflict !== undefined) prompt += conflictSection(conflict);
  else if (attempt.attempt > 1 && reprompt && attempt.previousError !== undefined) {
    prompt += `\n\n## Previous attempt failed\n\nAttempt ${attempt.attempt - 1} failed with this error:\n${attempt.previousError}\nAvoid the cause of this failure.`;
  }
  return prompt;
}

/** Longest patch of another chunk quoted in a prompt, in characters. */
export const MAX_QUOTED_PATCH = 8000;

/** What a chunk whose merge conflicted is told on its next attempt (always: without it, its edit would replace the other chunk's). */
function conflictSection(conflict: MergeConflict): string {
  const others = conflict.with.map((w) => {
    const patch = w.patch === undefined ? '' : `\n\n\`\`\`diff\n${quoted(w.patch)}\n\`\`\``;
    return `### Chunk ${w.sequenceIndex}: ${w.title}\n\nChanged ${w.paths.join(', ')}.${patch}`;
  });
  const by = others.length > 0 ? `\n\nThese changes are already merged:\n\n${others.join('\n\n')}` : '\n\nAnother change to them was merged first.';
  return (
    `\n\n## Merge conflict\n\nAttempt ${conflict.attempt} of this chunk could not be merged: it conflicts in ${conflict.paths.join(', ')}.${by}\n\n` +
    'You now start from the merged files. Make your change again on top of them, keeping what the other chunks did, and say in your answer how you reconciled the two changes.'
  );
}

function quoted(patch: string): string {
  const safe = patch.replaceAll('```', '` ` `');
  return safe.length <= MAX_QUOTED_PATCH ? safe : `${safe.slice(0, MAX_QUOTED_PATCH)}\n... (${safe.length - MAX_QUOTED_PATCH} more characters)`;
}
