/**
 * `troupe/a2a`: troupe and the Agent2Agent protocol (A2A 1.0), on the
 * official A2A JavaScript SDK (`@a2a-js/sdk`, an optional peer dependency
 * loaded on first use). {@link a2aServer} serves any runnable as an A2A
 * agent — a reader and writer of runs like `troupe/http`, with the same
 * `authorize` hook and tenants; {@link a2aAgent} and {@link a2aAdapter}
 * make any remote A2A agent a runnable (or an agent's model) that every
 * pattern can use.
 * @module troupe/a2a
 * @category Integrations
 */
export type { A2AEvents, A2ATaskState } from './events.js';
export { a2aServer, type A2AServer, type A2AServerOptions, type A2ARunOptions, type StartTaskRequest } from './server.js';
export {
  buildAgentCard,
  skillsFromAgents,
  A2A_PROTOCOL_VERSION,
  AGENT_CARD_PATH,
  type A2AAgentCard,
  type A2AAgentInterface,
  type A2AAgentSkill,
  type A2ASecurityScheme,
  type AgentCardOptions,
  type CardSource,
} from './card.js';
export { a2aAgent, type A2AAgent, type A2AAgentOptions, type A2AAnswer, type RemoteAgentCard } from './remote.js';
export { a2aAdapter, type A2AAdapterOptions, type A2AModelAdapter } from './adapter.js';
export type { A2AConnectionOptions, A2AHeaders, RemoteInputRequest } from './client.js';
export { RemoteAgentError, type RemoteAgentErrorReason } from './errors.js';
