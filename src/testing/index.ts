/**
 * `troupe/testing`: public test doubles and conformance suites. Test your
 * own flows with the scripted adapter and the simulated clock; test your own
 * adapters with {@link adapterSuite}. Importing it loads no test runner: the
 * suites register with the `describe` and `it` you pass them (vitest's or
 * `node:test`'s).
 * @module troupe/testing
 * @category Testing
 */
export { SimulatedClock, flushMicrotasks } from '../core/clock.js';
export {
  scriptedAdapter,
  inputText,
  estimateTokens,
  type ScriptedAdapter,
  type ScriptedAdapterOptions,
  type ScriptedCall,
  type ScriptedReply,
  type ScriptedRequest,
  type ScriptedRule,
  type ScriptedTurn,
} from '../adapters/scripted.js';
export {
  recordingAdapter,
  replayAdapter,
  parseRecording,
  recordSession,
  turnRecordsFromEvents,
  ReplayDivergenceError,
  type RecordingAdapter,
  type RecordingOptions,
  type ReplayAdapter,
  type ReplayOptions,
  type ReplaySource,
  type RecordedSessionInfo,
  type TurnRecord,
} from '../adapters/recording.js';
export { adapterSuite, type AdapterScenario, type AdapterSuiteOptions } from './adapter-suite.js';
export { workspaceSuite, type WorkspaceFixture, type WorkspaceSuiteOptions } from './workspace-suite.js';
export { storeSuite, adversarialKeys, type StoreSuiteOptions } from './store-suite.js';
export type { SuiteRunner, SuiteTestContext } from './runner.js';
export { memoryStore, type MemoryStore } from '../core/memory-store.js';
