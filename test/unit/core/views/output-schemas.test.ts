/**
 * src/core/views/output-schemas.ts: every document id the sources print (`'loopx.<name>/<n>'`) has
 * its schema in OUTPUT_SCHEMAS, each schema names its own id, and the JSON Schemas in schemas/
 * are what scripts/docs/output-schemas.ts writes from them now (`npm run docs`).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { OUTPUT_PRINTED_BY, OUTPUT_SCHEMAS } from '../../../../src/core/views/output-schemas';
import {
  isOutputSchemaFile,
  outputJsonSchema,
  outputSchemaFileName,
  outputSchemaFiles,
} from '../../../../scripts/docs/output-schemas';

const REPO = path.resolve(__dirname, '..', '..', '..', '..');
const SRC = path.join(REPO, 'src');

/** A document id as the sources write it: in quotes, or in a code span of a comment. */
const ID_IN_SOURCE = /['"`](loopx\.[a-z][a-z0-9-]*\/[0-9]+)['"`]/g;

/** Every id in src/ outside the schemas' own files, with the first file that names it. */
function idsInSources(): Map<string, string> {
  const found = new Map<string, string>();
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.tsx?$/.test(e.name) && !/^output-schemas.*\.ts$/.test(e.name))
        for (const m of fs.readFileSync(p, 'utf8').matchAll(ID_IN_SOURCE))
          if (!found.has(m[1]!)) found.set(m[1]!, path.relative(REPO, p));
    }
  };
  walk(SRC);
  return found;
}

/** The `schema` constants a JSON Schema allows at its top (each branch of a union). */
function idsOfJsonSchema(s: Record<string, unknown>): unknown[] {
  const branches = (s.anyOf ?? s.oneOf) as Record<string, unknown>[] | undefined;
  if (branches) return branches.flatMap(idsOfJsonSchema);
  const props = s.properties as Record<string, { const?: unknown }> | undefined;
  return [props?.schema?.const];
}

describe('output schemas', () => {
  it('every document id in src/ has its schema in OUTPUT_SCHEMAS, and every schema a document', () => {
    const ids = idsInSources();
    assert.ok(ids.size >= 30, `only ${ids.size} ids found in src/: is the pattern still right?`);
    const missing = [...ids].filter(([id]) => !Object.hasOwn(OUTPUT_SCHEMAS, id));
    assert.deepEqual(
      missing.map(([id, file]) => `${id} (${file})`),
      [],
      'add a schema for each to OUTPUT_SCHEMAS (src/core/views/output-schemas.ts), then run npm run docs',
    );
    const unused = Object.keys(OUTPUT_SCHEMAS).filter((id) => !ids.has(id));
    assert.deepEqual(unused, [], 'no source prints these any more: remove them from OUTPUT_SCHEMAS');
    assert.deepEqual(
      Object.keys(OUTPUT_PRINTED_BY).sort(),
      Object.keys(OUTPUT_SCHEMAS).sort(),
      'OUTPUT_PRINTED_BY says what prints each document in OUTPUT_SCHEMAS',
    );
  });

  it('each schema is a zod schema whose `schema` field is its own id, and nothing else', () => {
    for (const [id, schema] of Object.entries(OUTPUT_SCHEMAS)) {
      assert.ok(schema instanceof z.ZodType, id);
      const consts = idsOfJsonSchema(outputJsonSchema(id));
      assert.ok(consts.length > 0 && consts.every((c) => c === id), `${id}: schema is ${consts.join(', ')}`);
      assert.equal(
        schema.safeParse({ schema: id }).success,
        false,
        `${id} accepts a document with nothing in it`,
      );
      assert.match(outputSchemaFileName(id), /^loopx\.[a-z0-9-]+\.v[0-9]+\.schema\.json$/);
    }
    assert.equal(outputSchemaFileName('loopx.gate-change/1'), 'loopx.gate-change.v1.schema.json');
    assert.throws(() => outputSchemaFileName('loopx.x/../../y'), /not a document id/);
  });

  it('strict objects forbid other fields in the JSON Schemas; the others leave them open', () => {
    const init = outputJsonSchema('loopx.init/1');
    assert.equal(init.additionalProperties, false);
    const status = outputJsonSchema('loopx.status/1');
    assert.equal(status.additionalProperties, undefined);
    // Fields with a default are there in what is printed: required.
    const workflow = outputJsonSchema('loopx.workflow/1') as {
      properties: { todos: { items: { required: string[] } } };
    };
    assert.ok(workflow.properties.todos.items.required.includes('priority'));
  });

  it('schemas/ holds exactly what npm run docs writes now', async () => {
    const files = await outputSchemaFiles();
    assert.equal(files.size, Object.keys(OUTPUT_SCHEMAS).length + 1, 'a schema per id, and the README');
    for (const [rel, text] of files) {
      const mine = path.join(REPO, rel);
      assert.ok(fs.existsSync(mine), `${rel} is missing: run npm run docs`);
      assert.equal(fs.readFileSync(mine, 'utf8'), text, `${rel} is stale: run npm run docs`);
    }
    for (const name of fs.readdirSync(path.join(REPO, 'schemas')))
      if (isOutputSchemaFile(name))
        assert.ok(files.has(`schemas/${name}`), `schemas/${name} is no document's: run npm run docs`);
    const readme = files.get('schemas/README.md')!;
    for (const id of Object.keys(OUTPUT_SCHEMAS)) assert.ok(readme.includes(`\`${id}\``), id);
    assert.deepEqual([...(await outputSchemaFiles())], [...files], 'deterministic');
  });
});
