// Recipes of the adapters' functions (see ./types.ts): troupe/adapters/*
// and the test adapters of troupe/testing. None opens a session.
import { aiSdkAdapter } from '../../../src/adapters/ai-sdk.js';
import { adapterFromEnv } from '../../../src/adapters/env.js';
import { openaiAdapter } from '../../../src/adapters/openai.js';
import { processAdapter } from '../../../src/adapters/process.js';
import { claudeCodeProfile, codexProfile, copilotProfile } from '../../../src/adapters/process-profiles.js';
import { recordingAdapter, replayAdapter } from '../../../src/adapters/recording.js';
import { scriptedAdapter } from '../../../src/adapters/scripted.js';
import type { Recipes } from './types.js';

export const adaptersRecipes: Recipes = {
  // troupe/adapters/*
  aiSdkAdapter: (extra) => aiSdkAdapter({ model: 'provider/model', ...extra }),
  openaiAdapter: (extra) => openaiAdapter({ ...extra }),
  processAdapter: (extra) => processAdapter({ command: ['echo', '{prompt}'], ...extra }),
  claudeCodeProfile: (extra) => claudeCodeProfile({ ...extra }),
  codexProfile: (extra) => codexProfile({ ...extra }),
  copilotProfile: (extra) => copilotProfile({ ...extra }),
  // Checked whichever adapter the environment names (here none).
  adapterFromEnv: (extra) => adapterFromEnv({}, { ...extra }),
  // troupe/testing
  scriptedAdapter: (extra) => scriptedAdapter({ ...extra }),
  recordingAdapter: (extra) => recordingAdapter(scriptedAdapter(), { ...extra }),
  replayAdapter: (extra) => replayAdapter([], { ...extra }),
};
