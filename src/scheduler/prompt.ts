/**
 * The prompt of a chunk's attempt: the chunk's own prompt, the results of
 * its dependencies, the instructions added while the plan runs, and the
 * previous attempt's error.
 * @module
 */
import type { Attempt } from './attempt.js';
import type { ChunkRecord } from './record.js';

/** The full prompt of `attempt`, whose chunk depends on `dependencies`. */
export function chunkPrompt(attempt: Attempt, dependencies: readonly ChunkRecord[], instructions: readonly string[], reprompt: boolean): string {
  const c = attempt.chunk;
  let prompt = `# Chunk ${c.sequenceIndex}: ${c.title}\n\n${c.prompt}`;
  if (dependencies.length > 0) {
    prompt += '\n\n## Results from dependencies';
    for (const d of dependencies) prompt += `\n\n### ${d.chunk.sequenceIndex}. ${d.chunk.title} (${d.chunk.role})\n\n${d.output ?? ''}`;
  }
  if (instructions.length > 0) prompt += `\n\n## Additional instructions from the user\n\n${instructions.map((x) => `- ${x}`).join('\n')}`;
  if (attempt.attempt > 1 && reprompt && attempt.previousError !== undefined) {
    prompt += `\n\n## Previous attempt failed\n\nAttempt ${attempt.attempt - 1} failed with this error:\n${attempt.previousError}\nAvoid the cause of this failure.`;
  }
  return prompt;
}
