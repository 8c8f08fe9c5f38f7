/**
 * Start, Stop and Wake Agents: the editor runs `loopx drive` for the folders with lanes
 * (drive/agentsControl.ts owns the drivers). Each refuses in Restricted Mode before anything is
 * read: a driver starts the programs the policy declares, and stopping or waking one writes too.
 */
import type { CommandDeps, CommandTable } from './shared';
import { guardTrust } from './shared';

export function agentCommands(deps: CommandDeps): CommandTable {
  return {
    'loopx.startAgents': () => guardTrust().then(() => deps.agents.start()),
    'loopx.stopAgents': () => guardTrust().then(() => deps.agents.stop()),
    'loopx.wakeAgents': () => guardTrust().then(() => deps.agents.wake()),
  };
}
