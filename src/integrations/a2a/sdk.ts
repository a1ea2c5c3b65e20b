/**
 * The parts of the A2A JavaScript SDK (`@a2a-js/sdk`, an optional peer)
 * that troupe uses, loaded on first use: the JSON-RPC transport and the
 * protocol's errors for the server, the client and its transports for
 * remote agents.
 * Internal to troupe: no entry point exports the module as a whole.
 * @module
 */
import { loadPeer } from '../../core/peer.js';

async function importServerSdk() {
  const [core, server, errors] = await Promise.all([import('@a2a-js/sdk'), import('@a2a-js/sdk/server'), import('@a2a-js/sdk/errors')]);
  return {
    AgentCard: core.AgentCard,
    Message: core.Message,
    Task: core.Task,
    JsonRpcTransportHandler: server.JsonRpcTransportHandler,
    ServerCallContext: server.ServerCallContext,
    errors: {
      TaskNotFoundError: errors.TaskNotFoundError,
      TaskNotCancelableError: errors.TaskNotCancelableError,
      PushNotificationNotSupportedError: errors.PushNotificationNotSupportedError,
      UnsupportedOperationError: errors.UnsupportedOperationError,
      ContentTypeNotSupportedError: errors.ContentTypeNotSupportedError,
      ExtendedAgentCardNotConfiguredError: errors.ExtendedAgentCardNotConfiguredError,
      RequestMalformedError: errors.RequestMalformedError,
    },
    A2A_ERROR_CODE: errors.A2A_ERROR_CODE,
  };
}

async function importClientSdk() {
  const [core, client, errors] = await Promise.all([import('@a2a-js/sdk'), import('@a2a-js/sdk/client'), import('@a2a-js/sdk/errors')]);
  return {
    AgentCard: core.AgentCard,
    ClientFactory: client.ClientFactory,
    ClientFactoryOptions: client.ClientFactoryOptions,
    DefaultAgentCardResolver: client.DefaultAgentCardResolver,
    JsonRpcTransportFactory: client.JsonRpcTransportFactory,
    RestTransportFactory: client.RestTransportFactory,
    A2AError: errors.A2AError,
  };
}

/** The server side of the SDK. */
export type A2AServerSdk = Awaited<ReturnType<typeof importServerSdk>>;
/** The client side of the SDK. */
export type A2AClientSdk = Awaited<ReturnType<typeof importClientSdk>>;

/** Load the SDK's server side, or fail with a `missing_dependency` error that names it. */
export function loadA2AServerSdk(usedBy: string): Promise<A2AServerSdk> {
  return loadPeer('@a2a-js/sdk', importServerSdk, usedBy);
}

/** Load the SDK's client side, or fail with a `missing_dependency` error that names it. */
export function loadA2AClientSdk(usedBy: string): Promise<A2AClientSdk> {
  return loadPeer('@a2a-js/sdk', importClientSdk, usedBy);
}
