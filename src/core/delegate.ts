/**
 * The delegation point: patterns call {@link delegate} where one agent
 * passes work to another, and {@link enabledTargets} where they offer
 * targets to a model; both apply the pattern's own hooks and those of every
 * guarded runnable around it (see `delegation.ts`).
 * @module
 */
import { defined } from './defined.js';
import type { RunContext } from './context.js';
import type { Delegation, DelegationHooks, DelegationKind } from './delegation.js';
import { guardScope, scopeChain } from './guard-scope.js';

/**
 * The hooks in force in `ctx`: the pattern's own (`local`) first, then each guarded runnable's from the innermost out.
 * @internal
 */
export function delegationHooks(ctx: RunContext, local?: DelegationHooks): DelegationHooks[] {
  const hooks = scopeChain(guardScope(ctx)).flatMap((s) => (s.options.delegation ? [s.options.delegation] : []));
  return local ? [local, ...hooks] : hooks;
}

/**
 * What {@link delegate} decided: the receiver's input, or a refusal with its reason.
 * @internal
 */
export type DelegateResult = { input: string } | { refused: string; disabled?: boolean };

/**
 * Apply the delegation hooks in force to `delegation`: every `enabled`
 * must allow the target, then each hook's `inputFilter` and
 * `beforeDelegation` in turn (the pattern's own first). Without hooks, the
 * input as built. A `delegation.decided` event records what was decided
 * when there were hooks.
 * @internal
 */
export async function delegate(ctx: RunContext, delegation: Delegation, local?: DelegationHooks): Promise<DelegateResult> {
  const hooks = delegationHooks(ctx, local);
  if (hooks.length === 0) return { input: delegation.input };
  const { kind, from, to } = delegation;
  const decided = (decision: 'allowed' | 'changed' | 'refused' | 'disabled', reason?: string) =>
    ctx.emit('delegation.decided', { kind, from, to, decision, ...defined({ reason }) });
  for (const h of hooks) {
    if (h.enabled && !(await h.enabled({ kind, from, to }, ctx))) {
      const reason = `"${to}" is not available`;
      decided('disabled', reason);
      return { refused: reason, disabled: true };
    }
  }
  let current: Delegation = delegation;
  for (const h of hooks) {
    if (h.inputFilter) current = { ...current, input: String(await h.inputFilter(current, ctx)) };
    if (h.beforeDelegation) {
      const decision = await h.beforeDelegation(current, ctx);
      if (decision && 'refuse' in decision) {
        decided('refused', decision.refuse);
        return { refused: decision.refuse };
      }
      if (decision && 'input' in decision) current = { ...current, input: String(decision.input) };
    }
  }
  decided(current.input === delegation.input ? 'allowed' : 'changed');
  return { input: current.input };
}

/**
 * The targets of `targets` that every `enabled` hook in force allows, in
 * order (evaluated now, at run time). Without hooks, all of them.
 * @internal
 */
export async function enabledTargets(ctx: RunContext, kind: DelegationKind, from: string, targets: readonly string[], local?: DelegationHooks): Promise<string[]> {
  const hooks = delegationHooks(ctx, local).filter((h) => h.enabled);
  if (hooks.length === 0) return [...targets];
  const out: string[] = [];
  for (const to of targets) {
    let on = true;
    for (const h of hooks) if (on) on = await h.enabled!({ kind, from, to }, ctx);
    if (on) out.push(to);
  }
  return out;
}
