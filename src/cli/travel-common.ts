/**
 * What `troupe fork` and `troupe replay` share: the store folder, and the
 * runnable a logged run was made from, compiled from its agent files.
 * @module
 */
import type { ModelAdapter } from '../core/adapter.js';
import { ConfigurationError } from '../core/errors.js';
import type { Runnable } from '../core/runnable.js';
import { compileAgents } from '../agents/compile.js';
import { adapterLine, cliAdapterName, createCliAdapter } from './adapters.js';
import { loadFolder } from './agents.js';
import type { CliIo } from './io.js';
import { defined } from '../core/defined.js';

/** The file store folder: `--store`, else `TROUPE_STORE`. */
export function storeDir(flag: string | undefined, io: CliIo): string | undefined {
  return flag ?? (io.env.TROUPE_STORE || undefined);
}

/** The flags that say where agents and the model come from. */
export interface AgentFlags {
  adapter?: string | undefined;
  script?: string | undefined;
  as?: string | undefined;
}

/** The runnable named `name` among the agents of `dir` (a logged run names its runnable), and the adapter of the flags. */
export async function compileForRun(dir: string, name: string, flags: AgentFlags, io: CliIo): Promise<{ runnable: Runnable; adapter: ModelAdapter; names: string[] }> {
  const loaded = await loadFolder(dir, flags, io);
  const flows = compileAgents(loaded.agents, { unknownTools: 'warn' });
  const runnable = Object.values(flows).find((f) => f.name === name) ?? flows[name];
  if (!runnable) throw new ConfigurationError(`The run was made by "${name}", which is not among the agents in ${dir} (${Object.keys(flows).join(', ')})`, { code: 'unknown_agent', details: { name } });
  io.err(adapterLine('troupe', flags.adapter, io.env, flags.script));
  const adapter = await createCliAdapter(cliAdapterName(flags.adapter, io.env), { defs: loaded.agents, env: io.env, ...defined({ script: flags.script, clock: io.clock }) });
  const names = [...new Set(loaded.agents.map((a) => a.adapter).filter((a): a is string => typeof a === 'string'))];
  return { runnable, adapter, names };
}
