import { scriptedAdapter } from '../../src/adapters/scripted.js';
import type { AdapterScenario } from '../../src/testing/adapter-suite.js';

/** A scripted adapter that plays a conformance scenario. */
export function scriptedFor(scenario: AdapterScenario) {
  switch (scenario.kind) {
    case 'text':
      return scriptedAdapter({ fallback: { text: scenario.text, usage: scenario.usage }, models: ['scripted-small', 'scripted-large'] });
    case 'tool-call':
      return scriptedAdapter({
        rules: [
          { match: (r) => r.turn === 1, reply: { toolCalls: [{ name: scenario.tool, arguments: scenario.arguments }] } },
          { reply: scenario.finalText },
        ],
      });
    case 'hang':
      return scriptedAdapter({ fallback: { fault: 'hang' } });
    case 'stream-hang':
      return undefined; // the scripted adapter reports a turn's text only once it is complete
  }
}

