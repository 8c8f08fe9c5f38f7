import type * as vscode from 'vscode';

/** A base for long-lived services: what they register is disposed with them, so nothing leaks. */
export abstract class Disposable implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private disposed = false;

  protected _register<T extends vscode.Disposable>(d: T): T {
    if (this.disposed) d.dispose();
    else this.disposables.push(d);
    return d;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    while (this.disposables.length) {
      try {
        this.disposables.pop()!.dispose();
      } catch {
        /* keep disposing the rest */
      }
    }
  }
}
