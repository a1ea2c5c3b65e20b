// Recipes of troupe/guardrails' functions (see ./types.ts).
import { ApprovalQueue } from '../../../src/guardrails/approvals.js';
import { classifierGuardrail } from '../../../src/guardrails/classifier.js';
import { lastMessages } from '../../../src/guardrails/filters.js';
import { withGuardrails } from '../../../src/guardrails/with-guardrails.js';
import { agent } from '../../../src/patterns/agent.js';
import type { Recipes } from './types.js';

const a = (name: string) => agent({ name });

export const guardrailsRecipes: Recipes = {
  withGuardrails: (extra) => withGuardrails(a('helper'), { ...extra }),
  classifierGuardrail: (extra) => classifierGuardrail(a('judge'), { ...extra }),
  lastMessages: (extra) => lastMessages(1, { ...extra }),
  ApprovalQueue: (extra) => new ApprovalQueue({ handler: () => ({ approved: true }), ...extra }),
};
