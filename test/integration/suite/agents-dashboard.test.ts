/**
 * Agent surfaces and the dashboard in the real host: language-model tools, the MCP server
 * definition, the terminal PATH, the @loopx chat participant, and the read-only dashboard.
 */
import * as assert from 'node:assert/strict';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { api, invokeTool, until, withStub, workspaceDir } from './util';
import { Store, AGENT_TOOL_NAMES } from '../../../src/core/index';

const GOAL = 'refactor-payment-module';

function treeHash(dir: string): string {
  const h = crypto.createHash('sha256');
  const walk = (d: string) => {
    for (const name of fs.readdirSync(d).sort()) {
      if (name === 'local') continue;
      const p = path.join(d, name);
      if (fs.statSync(p).isDirectory()) walk(p);
      else h.update(p).update(fs.readFileSync(p));
    }
  };
  walk(dir);
  return h.digest('hex');
}

/** Adds a todo through the command, the person confirming its modal (arguments alone decide nothing). */
function addTodoConfirmed(args: object): Thenable<string | undefined> {
  const confirm = (async (_m: string, _o: vscode.MessageOptions, action: string) =>
    action) as unknown as typeof vscode.window.showWarningMessage;
  return withStub('showWarningMessage', confirm, () =>
    vscode.commands.executeCommand<string>('loopx.addTodo', args),
  );
}

export function registerAgentAndDashboardTests(): void {
  describe('LoopX agent tools in VS Code agent mode', function () {
    it('contributes every agent tool to vscode.lm.tools', async () => {
      await api();
      const names = vscode.lm.tools.map((t) => t.name);
      for (const n of AGENT_TOOL_NAMES) assert.ok(names.includes(n), `${n} missing from vscode.lm.tools`);
      const contract = vscode.lm.tools.find((t) => t.name === 'loopx_get_contract')!;
      assert.equal((contract.inputSchema as { type?: string }).type, 'object');
    });

    it('runs a turn through the tools and writes the expected events, as an agent on the lm-tool channel', async () => {
      const store = new Store(workspaceDir());
      const goalId = await vscode.commands.executeCommand<string>('loopx.createGoal', {
        title: 'Tools goal',
        objective: 'through lm tools',
      });
      await addTodoConfirmed({ goalId, title: 'think it through' });
      const status = JSON.parse(await invokeTool('loopx_get_status', { goalId }));
      assert.equal(status.id, goalId);
      const out = JSON.parse(await invokeTool('loopx_get_contract', { goalId }));
      assert.equal(out.decision, 'run');
      const contractId = out.interaction_contract.id as string;
      const todoId = out.interaction_contract.agent_channel.primary.todo_id as string;
      assert.match(await invokeTool('loopx_claim_todo', { contractId, todoId }), /claimed todo/);
      assert.match(
        await invokeTool('loopx_record_evidence', {
          contractId,
          todoId,
          kind: 'note',
          summary: 'read the code',
        }),
        /recorded evidence/,
      );
      assert.match(
        await invokeTool('loopx_report_spend', { contractId, tokens: 1200, costUsd: 0.01 }),
        /1200 tokens/,
      );
      assert.match(
        await invokeTool('loopx_complete_todo', { contractId, todoId, summary: 'decided: no change needed' }),
        /is done/,
      );
      assert.match(
        await invokeTool('loopx_add_todo', { goalId, title: 'ship it', action: 'echo ship' }),
        /waits for gate review-/,
      );
      assert.match(
        await invokeTool('loopx_request_gate', {
          goalId,
          gateId: 'ship-ok',
          reason: 'shipping needs a person',
        }),
        /pending/,
      );
      const events = store.readLog(goalId).events.filter((e) => e.actor.channel === 'lm-tool');
      assert.deepEqual(
        [...new Set(events.map((e) => e.type))].sort(),
        [
          'evidence.added',
          'gate.requested',
          'run.spend',
          'run.started',
          'todo.added',
          'todo.claimed',
          'todo.completed',
        ].sort(),
      );
      assert.ok(events.every((e) => e.actor.kind === 'agent'));
    });

    it('refuses a write outside the contract, names the contract and says what to do next', async () => {
      const goalId = await vscode.commands.executeCommand<string>('loopx.createGoal', {
        title: 'Refusals',
        objective: '',
      });
      await addTodoConfirmed({ goalId, title: 'listed', action: 'echo listed' });
      const out = JSON.parse(await invokeTool('loopx_get_contract', { goalId }));
      const contractId = out.interaction_contract.id as string;
      await assert.rejects(
        invokeTool('loopx_claim_todo', { contractId, todoId: 'not-in-it' }),
        new RegExp(`not in contract ${contractId}`),
      );
      const listedTodo = out.interaction_contract.cli_channel.next_cli_actions[0].match(/--todo (\S+)/)[1];
      await assert.rejects(
        invokeTool('loopx_complete_todo', { contractId, todoId: listedTodo, summary: 'x' }),
        /has a command: run it .*loopx exec/,
      );
      await assert.rejects(
        invokeTool('loopx_get_contract', { wrong: 1 }),
        /Unrecognized key|wrong|goalId is needed/,
      );
      await assert.rejects(
        invokeTool('loopx_report_spend', { contractId: 'c-forged0000' }),
        /no contract .*Next: call loopx_get_contract/,
      );
    });

    it('provides the LoopX MCP server definition, which runs `loopx mcp`', async () => {
      const defs = (await api()).mcpDefinitions();
      assert.equal(defs.length, 1);
      assert.equal(defs[0]!.label, 'LoopX');
      assert.deepEqual(defs[0]!.args.slice(-3), ['--workspace', workspaceDir(), 'mcp']);
      // And VS Code itself starts it and sees its tools.
      let started = false;
      for (let i = 0; i < 20 && !started; i++) {
        try {
          await vscode.commands.executeCommand('workbench.mcp.startServer', 'loopx.loopx-vscode/LoopX', {
            waitForLiveTools: true,
          });
          started = vscode.lm.tools.some((t) => /^mcp_.*loopx_get_status$/.test(t.name));
        } catch {
          /* the workbench has not noticed the provider yet */
        }
        if (!started) await new Promise((r) => setTimeout(r, 500));
      }
      const mcpTool = vscode.lm.tools.find((t) => /^mcp_.*loopx_get_status$/.test(t.name));
      assert.ok(
        mcpTool,
        `MCP tools in vscode.lm.tools: ${vscode.lm.tools
          .map((t) => t.name)
          .filter((n) => n.startsWith('mcp_'))
          .join(', ')}`,
      );
      const text = await invokeTool(mcpTool!.name, {});
      assert.match(text, /loopx\.status\/1/);
    });

    it('puts loopx on PATH in a new integrated terminal, where it answers --version', async () => {
      const out = path.join(os.tmpdir(), `loopx-term-${process.pid}.txt`);
      fs.rmSync(out, { force: true });
      const term = vscode.window.createTerminal({
        name: 'loopx-test',
        shellPath: '/bin/bash',
        shellArgs: ['--norc', '--noprofile'],
      });
      try {
        term.sendText(`loopx --version >> ${out}`);
        term.sendText(`echo "ws=$LOOPX_WORKSPACE" >> ${out}`);
        const text = await until(
          'the terminal output',
          () => {
            const t = fs.existsSync(out) ? fs.readFileSync(out, 'utf8') : '';
            return /ws=/.test(t) ? t : undefined;
          },
          20_000,
        );
        const version = (
          vscode.extensions.getExtension('loopx.loopx-vscode')!.packageJSON as { version: string }
        ).version;
        assert.match(text, new RegExp(`^${version.replace(/\./g, '\\.')}$`, 'm'));
        assert.match(text, new RegExp(`ws=${workspaceDir()}`));
      } finally {
        term.dispose();
        fs.rmSync(out, { force: true });
      }
    });

    it('@loopx answers /status, /contract and /gates from the core, with buttons', async () => {
      const { chatHandler } = await api();
      const run = async (command: string | undefined) => {
        const md: string[] = [];
        const buttons: string[] = [];
        const stream = {
          markdown: (s: string | vscode.MarkdownString) => md.push(typeof s === 'string' ? s : s.value),
          button: (c: vscode.Command) => buttons.push(c.command),
        } as unknown as vscode.ChatResponseStream;
        await chatHandler(
          { command, prompt: '' } as vscode.ChatRequest,
          { history: [] } as unknown as vscode.ChatContext,
          stream,
          new vscode.CancellationTokenSource().token,
        );
        return { text: md.join(''), buttons };
      };
      const status = await run('status');
      assert.match(status.text, /Refactor Payment Module/);
      assert.deepEqual(status.buttons, ['loopx.openDashboard']);
      const gates = await run('gates');
      assert.match(gates.text, /waiting for you/);
      assert.ok(gates.buttons.includes('loopx.approveGate'));
      const contract = await run('contract');
      assert.match(contract.text, /RUN|WAIT|DONE|STOP/);
      assert.ok(contract.buttons.includes('loopx.requestContract'));
    });
  });

  describe('LoopX dashboard in VS Code', function () {
    it('opens one panel with a strict nonce CSP, and reveals it instead of opening a second', async () => {
      const { dashboard } = await api();
      await vscode.commands.executeCommand('loopx.openDashboard');
      const panel = await until('the panel', () => dashboard.panel);
      const html = panel.webview.html;
      const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)?.[1] ?? '';
      assert.match(csp, /default-src 'none'/);
      const nonce = /script-src 'nonce-([A-Za-z0-9_+/=-]+)'/.exec(csp)?.[1];
      assert.ok(nonce && nonce.length >= 16, csp);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
      for (const tag of html.match(/<script[^>]*>/g) ?? [])
        assert.match(tag, new RegExp(`nonce="${nonce!.replace(/[+/=-]/g, '\\$&')}"`));
      await vscode.commands.executeCommand('loopx.openDashboard');
      assert.equal(dashboard.panel, panel, 'the same panel is revealed');
      await until(
        'the ready handshake and a status post',
        () => dashboard.lastPosted?.type === 'status',
        20_000,
      );
    });

    it('drops a forbidden message from the webview, logs it, and writes nothing', async () => {
      const { dashboard } = await api();
      const root = path.join(workspaceDir(), '.loopx');
      const before = treeHash(root);
      const dropped = dashboard.received.dropped;
      await dashboard.onMessage({
        type: 'invoke',
        capability: 'gate.approve',
        goalId: GOAL,
        gateId: 'staging-deploy',
      });
      await dashboard.onMessage({ type: 'approve-gate', goalId: '../etc', gateId: 'x' });
      await dashboard.onMessage('not even an object');
      assert.equal(dashboard.received.dropped, dropped + 3);
      assert.equal(treeHash(root), before, 'nothing under .loopx/ changed');
    });

    it('shows a change made by the CLI in the next status it posts', async () => {
      const { dashboard } = await api();
      const { loopxCli } = await import('./util');
      const r = loopxCli(['project_prompt', 'create', '--title', 'Dashboard sees this', '--description', '']);
      assert.equal(r.status, 0, r.stderr);
      await until(
        'a status post with the new goal',
        () => {
          const m = dashboard.lastPosted;
          return m?.type === 'status' && m.doc.goals.some((g) => g.title === 'Dashboard sees this');
        },
        5000,
      );
    });
  });
}
