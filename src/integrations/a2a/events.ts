/**
 * The events of remote A2A agents (`a2a.*`), added to the run's event map
 * (see `TroupeLayerEvents` in `src/core/events.ts`).
 * @module
 */

/** The states of an A2A task, as troupe names them. */
export type A2ATaskState = 'submitted' | 'working' | 'input-required' | 'auth-required' | 'completed' | 'failed' | 'canceled' | 'rejected' | 'unknown';

/** The events of remote A2A agents, by name. */
export interface A2AEvents {
  /** A remote agent's card was read and checked: who it says it is, its skills, and the endpoint used. */
  'a2a.card': { url: string; name: string; version: string; skills: string[]; endpoint: string; binding: string; streaming: boolean };
  /** A remote task changed state, or said something while working (`text`). */
  'a2a.status': { agent: string; taskId: string; contextId: string; state: A2ATaskState; text?: string };
  /** A remote task produced (part of) an artifact: its text as received. */
  'a2a.artifact': { agent: string; taskId: string; artifactId: string; name?: string; text: string; append: boolean };
  /** The run asked the remote agent to cancel its task, and whether the agent took the request. */
  'a2a.cancelled': { agent: string; taskId: string; acknowledged: boolean; error?: string };
}

declare global {
  interface TroupeLayerEvents extends A2AEvents {}
}
