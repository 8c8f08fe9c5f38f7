/**
 * Who may decide: a person's signed decisions, approver and terminal keys, the signed policy,
 * and an agent's identity from its channel.
 */
export * from './identity';
export * from './keys';
export * from './passkey';
export * from './policy-signature';
export * from './signed-decisions';
export * from './terminal-key';
export * from './workspace-policy';
