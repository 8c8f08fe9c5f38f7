/** Entry of the integration suite, loaded by VS Code's extension host (`extensionTestsPath`). */
import Mocha from 'mocha';
import { registerExtensionTests } from './extension.test';
import { registerAgentAndDashboardTests } from './agents-dashboard.test';
import { registerTrustTests } from './trust.test';
import { registerCliInstallTests } from './cli-install.test';
import { registerWorkflowAndBrowserTests } from './workflows-browser.test';
import { registerDriveAgentsTests } from './drive-agents.test';
import { registerAllWorkspacesTests } from './all-workspaces.test';
import { registerAddPasskeyTests } from './add-passkey.test';
import { registerEditorCommandAttackTests } from '../../security/host/editor-commands.host';
import { registerNotificationAttackTests } from '../../security/host/notification.host';

export function run(): Promise<void> {
  const mocha = new Mocha({
    ui: 'bdd',
    timeout: 60_000,
    color: false,
    reporter: 'spec',
    grep: process.env.LOOPX_TEST_GREP || undefined,
  });
  mocha.suite.emit('pre-require', globalThis, 'suite', mocha);
  registerExtensionTests();
  registerAgentAndDashboardTests();
  registerTrustTests();
  registerCliInstallTests();
  registerWorkflowAndBrowserTests();
  registerAllWorkspacesTests();
  registerAddPasskeyTests();
  registerEditorCommandAttackTests();
  registerNotificationAttackTests();
  // Last: it declares a runtime in the policy and leaves a goal the lanes worked on.
  registerDriveAgentsTests();
  return new Promise((resolve, reject) => {
    mocha.run((failures) =>
      failures
        ? reject(new Error(`${failures} integration test${failures > 1 ? 's' : ''} failed`))
        : resolve(),
    );
  });
}
