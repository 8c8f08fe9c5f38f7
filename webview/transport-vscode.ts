/** The VS Code webview's transport: `postMessage` both ways, state kept by VS Code. */
import type { Transport } from './transport';

interface VsCodeApi {
  postMessage(msg: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

export function vscodeTransport(): Transport {
  const vscode = acquireVsCodeApi();
  return {
    kind: 'vscode',
    post: (msg) => vscode.postMessage(msg),
    getState: () => vscode.getState(),
    setState: (s) => vscode.setState(s),
    subscribe(deliver) {
      window.addEventListener('message', (e: MessageEvent) => deliver(e.data));
    },
  };
}
