/**
 * Model fallback: an agent with several models in order of preference
 * reopens its session on the next model when the current one fails before
 * its first answer.
 * @module
 */
import type { ModelSession, ModelTurn, SendOptions, ToolResult } from '../core/adapter.js';
import { AdapterError } from '../core/errors.js';

/** Called when a model failed and the next one is tried. */
export type ModelFallbackListener = (info: { from: string; to: string; error: AdapterError }) => void;

/**
 * A session over `models[0]` that, when a turn fails with an `AdapterError`
 * before any turn has succeeded, closes the session, opens one on the next
 * model (through `open`) and sends the same input again. Once a turn has
 * succeeded, the model is fixed: the conversation's history lives in it.
 * Cancellation and other errors are never retried.
 */
export async function openWithModelFallback(
  models: readonly string[],
  open: (model: string, signal: AbortSignal | undefined) => Promise<ModelSession>,
  signal: AbortSignal | undefined,
  onFallback: ModelFallbackListener,
): Promise<ModelSession> {
  let index = 0;
  let current = await open(models[0]!, signal);
  let answered = false;
  return {
    get id() {
      return current.id;
    },
    async send(input: string | ToolResult[], options?: SendOptions): Promise<ModelTurn> {
      for (;;) {
        try {
          const turn = await current.send(input, options);
          answered = true;
          return turn;
        } catch (error) {
          const next = models[index + 1];
          if (answered || next === undefined || options?.signal?.aborted || !(error instanceof AdapterError)) throw error;
          await current.close().catch(() => undefined);
          onFallback({ from: models[index]!, to: next, error });
          index++;
          current = await open(next, options?.signal);
        }
      }
    },
    close: () => current.close(),
  };
}
