/**
 * The op tree: every runnable opens a node; usage rolls up to the root and
 * can be read per agent and per kind.
 * @module
 */
import { addUsage, emptyUsage, type Usage } from './usage.js';
import type { OutcomeReason, OutcomeStatus } from './outcome.js';
import type { BudgetLimits, BudgetSpend } from './budget.js';

/** One node of a run's op tree. */
export interface OpNode {
  /** Unique within the run (`op-1`, `op-2`, ...). */
  id: string;
  /** What kind of runnable opened it (`agent`, `handoff`, `router`, ...). */
  kind: string;
  /** The runnable's name. */
  name: string;
  /** The agent, for agent nodes. */
  agent?: string;
  /** Clock time when it opened. */
  start: number;
  /** Clock time when it closed. */
  end?: number;
  /** `running` until it closes. */
  status: OutcomeStatus | 'running';
  /** Why it finished, where its status alone does not say (see `Outcome.reason`). */
  reason?: OutcomeReason;
  /** Usage of this node's own model turns (children excluded). */
  usage: Usage;
  /** Nodes opened while this one ran. */
  children: OpNode[];
  /** Error message, when it failed. */
  error?: string;
  /** The budgets this op was entered with: limits and what was spent (kept up to date while the op runs). */
  budgets?: OpBudget[];
}

/** A budget on an op node: see {@link OpNode.budgets}. */
export interface OpBudget {
  /** The budget's id in the run. */
  id: string;
  /** Its name. */
  name: string;
  limits: BudgetLimits;
  /** Spend against it (the whole budget's, for a shared one). */
  spent: BudgetSpend;
}

/** Usage of a node and everything under it. */
export function totalUsage(node: OpNode): Usage {
  return addUsage(node.usage, ...node.children.map(totalUsage));
}

/** Usage per agent name over a tree (each agent's own turns). */
export function usageByAgent(node: OpNode): Record<string, Usage> {
  const out: Record<string, Usage> = {};
  walk(node, (n) => {
    if (n.agent === undefined || n.usage.turns === 0) return;
    out[n.agent] = addUsage(out[n.agent], n.usage);
  });
  return out;
}

/** Usage per op kind over a tree (the nodes' own usage). */
export function usageByKind(node: OpNode): Record<string, Usage> {
  const out: Record<string, Usage> = {};
  walk(node, (n) => {
    out[n.kind] = addUsage(out[n.kind], n.usage);
  });
  return out;
}

/** Visit every node depth-first, parents first. */
export function walk(node: OpNode, visit: (node: OpNode, depth: number) => void, depth = 0): void {
  visit(node, depth);
  for (const child of node.children) walk(child, visit, depth + 1);
}

/** A new op node. */
export function createOp(id: string, kind: string, name: string, start: number, agent?: string): OpNode {
  const node: OpNode = { id, kind, name, start, status: 'running', usage: emptyUsage(), children: [] };
  if (agent !== undefined) node.agent = agent;
  return node;
}

/**
 * The op tree as indented text, one line per node with its status, time and
 * usage.
 */
export function formatOpTree(root: OpNode): string {
  const lines: string[] = [];
  walk(root, (n, depth) => {
    const u = totalUsage(n);
    const ms = n.end === undefined ? '…' : `${n.end - n.start}ms`;
    const who = n.agent !== undefined && n.agent !== n.name ? ` (${n.agent})` : '';
    const cost = u.costUsd > 0 ? ` $${u.costUsd.toFixed(4)}` : '';
    const budgets = (n.budgets ?? []).map((b) => ` budget ${b.name}: ${formatSpend(b)}`).join(';');
    lines.push(
      `${'  '.repeat(depth)}${depth === 0 ? '' : '└ '}${n.kind} ${n.name}${who} [${n.status}] ${ms} ` +
        `in=${u.inputTokens} out=${u.outputTokens} turns=${u.turns}${cost}${budgets}`,
    );
  });
  return lines.join('\n');
}

/** A budget's spend against each of its limits: `totalTokens 410/1000, costUsd 0.0100/0.5000`. */
function formatSpend(b: OpBudget): string {
  return Object.entries(b.limits)
    .map(([key, max]) => {
      const spent = b.spent[key as keyof BudgetSpend];
      const show = (v: number) => (Number.isInteger(v) ? String(v) : v.toFixed(4));
      return `${key} ${show(spent)}/${show(max as number)}`;
    })
    .join(', ');
}
