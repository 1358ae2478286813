// The close frame nats-server sends when it ends a WebSocket client (wsEnqueueCloseMessage): a status
// chosen by why the connection closed, and that reason as the body.
import type { CloseReason } from '../client-connection.js';

export const WS_CLOSE_NORMAL = 1000;
export const WS_CLOSE_GOING_AWAY = 1001;
export const WS_CLOSE_PROTOCOL_ERROR = 1002;
export const WS_CLOSE_POLICY_VIOLATION = 1008;
export const WS_CLOSE_MESSAGE_TOO_BIG = 1009;
export const WS_CLOSE_INTERNAL_ERROR = 1011;

const STATUS: Partial<Record<CloseReason, number>> = {
  'Client Closed': WS_CLOSE_NORMAL,
  'Authentication Timeout': WS_CLOSE_POLICY_VIOLATION,
  'Authentication Failure': WS_CLOSE_POLICY_VIOLATION,
  'Slow Consumer (Pending Bytes)': WS_CLOSE_POLICY_VIOLATION,
  'Slow Consumer (Write Deadline)': WS_CLOSE_POLICY_VIOLATION,
  'Maximum Account Connections Exceeded': WS_CLOSE_POLICY_VIOLATION,
  'Maximum Connections Exceeded': WS_CLOSE_POLICY_VIOLATION,
  'Maximum Control Line Exceeded': WS_CLOSE_POLICY_VIOLATION,
  'Parse Error': WS_CLOSE_PROTOCOL_ERROR,
  'Protocol Violation': WS_CLOSE_PROTOCOL_ERROR,
  'Maximum Message Payload Exceeded': WS_CLOSE_MESSAGE_TOO_BIG,
  'Write Error': WS_CLOSE_GOING_AWAY,
  'Stale Connection': WS_CLOSE_GOING_AWAY,
  'Server Shutdown': WS_CLOSE_GOING_AWAY,
};

/** nats-server's status for `reason` (1011 for anything it does not name, as its default). */
export function closeStatusFor(reason: CloseReason | null): number {
  return reason === null ? WS_CLOSE_NORMAL : (STATUS[reason] ?? WS_CLOSE_INTERNAL_ERROR);
}
