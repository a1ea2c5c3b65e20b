/**
 * `troupe/guardrails`: guardrails on any runnable — checks on its input,
 * its output (whole and as it streams) and each tool call, any of which can
 * end the run — approvals (a person decides each tool call, as a tool
 * guardrail), and hooks on handoffs, routes, delegations and agents called
 * as tools. The kernel enforces them (`troupe/kernel` has the
 * contracts and the hook points); this is what an application uses.
 * @module troupe/guardrails
 * @category Guardrails
 */

// Guarding a runnable
export { withGuardrails } from './with-guardrails.js';
export {
  GuardrailTripError,
  defineGuardrail,
  defineToolGuardrail,
  type Guardrail,
  type GuardrailCheckContext,
  type GuardrailOptions,
  type GuardrailStage,
  type GuardrailVerdict,
  type ToolGuardrail,
  type ToolGuardrailContext,
  type ToolGuardrailDecision,
  type TripVerdict,
} from '../core/guardrails.js';

// Approvals: a person decides whether a tool call runs
export {
  ApprovalQueue,
  toolRisks,
  type ApprovalDecision,
  type ApprovalGuardrailOptions,
  type ApprovalHandler,
  type ApprovalQueueEvents,
  type ApprovalQueueOptions,
  type ApprovalRequest,
  type ApprovalScope,
  type ApprovalSource,
  type GuardOptions,
  type ToolRisk,
} from './approvals.js';

// Guardrails that are agents
export {
  classifierGuardrail,
  classifierPrompt,
  parseClassifierVerdict,
  safeParseClassifierVerdict,
  type ClassifierGuardrailOptions,
  type ClassifierVerdict,
} from './classifier.js';

// Delegation hooks and input filters
export type {
  Delegation,
  DelegationDecision,
  DelegationHooks,
  DelegationKind,
  DelegationMessage,
  DelegationTarget,
} from '../core/delegation.js';
export { lastMessages, renderHistory, withoutToolOutput, type LastMessagesOptions } from './filters.js';
