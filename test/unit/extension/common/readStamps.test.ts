import { describe, it } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ReadStamps } from '../../../../src/extension/common/readStamps';

function tempFile(text: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-stamps-'));
  const file = path.join(dir, 'index.json');
  fs.writeFileSync(file, text);
  return file;
}

function replace(file: string, text: string): void {
  fs.writeFileSync(`${file}.tmp`, text);
  fs.renameSync(`${file}.tmp`, file);
}

describe('ReadStamps: the fallback for a file watcher that missed a write', () => {
  it('reports a write that lands between the read and the first look', () => {
    const file = tempFile('[]');
    const stamps = new ReadStamps();
    stamps.markRead(file);
    replace(file, '[{"id":"g"}]');
    assert.deepEqual(stamps.changed(), [file]);
    fs.rmSync(path.dirname(file), { recursive: true });
  });

  it('reports each change once, and nothing for a file that did not change', () => {
    const file = tempFile('[]');
    const stamps = new ReadStamps();
    stamps.markRead(file);
    assert.deepEqual(stamps.changed(), []);
    replace(file, '[]');
    assert.deepEqual(stamps.changed(), [file], 'a same-size atomic rewrite is a change');
    assert.deepEqual(stamps.changed(), []);
    fs.rmSync(path.dirname(file), { recursive: true });
    assert.deepEqual(stamps.changed(), [file], 'a deleted file is a change');
  });

  it('looks only at files that were read', () => {
    const file = tempFile('[]');
    const stamps = new ReadStamps();
    replace(file, '[1]');
    assert.deepEqual(stamps.changed(), []);
    fs.rmSync(path.dirname(file), { recursive: true });
  });
});
