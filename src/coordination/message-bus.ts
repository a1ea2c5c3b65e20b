/**
 * The message bus of a lead coordination (and of a plan's workers): it
 * lives in the core, below both, and is re-exported here.
 * @module
 */
export { MessageBus, type CoordMessage, type MessageBusOptions, type MessageInput, type MessageKind } from '../core/message-bus.js';
