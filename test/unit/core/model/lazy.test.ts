import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';
import { z } from 'zod';
import { lazy, lazyArray } from '../../../../src/core/model/lazy';

describe('lazy values', () => {
  it('are built on first touch, once', () => {
    let built = 0;
    const Thing = lazy(() => {
      built++;
      return z.object({ id: z.string() });
    });
    const Holder = lazy(() => z.object({ thing: Thing }));
    assert.equal(built, 0, 'declaring them builds nothing');
    assert.deepEqual(Holder.parse({ thing: { id: 'a' } }), { thing: { id: 'a' } });
    assert.equal(built, 1);
    Thing.parse({ id: 'b' });
    assert.equal(built, 1);
  });

  it('behave as the schema: parse errors, instanceof, shape, extend, keys and spreading', () => {
    const Eager = z.object({ id: z.string().min(2), n: z.number().int().optional() });
    const Lazy = lazy(() => z.object({ id: z.string().min(2), n: z.number().int().optional() }));
    assert.ok(Lazy instanceof z.ZodObject);
    assert.deepEqual(Object.keys(Lazy.shape), ['id', 'n']);
    const bad = { id: 'x', n: 1.5 };
    assert.deepEqual(Lazy.safeParse(bad).error?.issues, Eager.safeParse(bad).error?.issues);
    assert.deepEqual(Lazy.extend({ k: z.boolean() }).parse({ id: 'ab', k: true }), { id: 'ab', k: true });
    const fields = lazy(() => ({ a: z.string(), b: z.number() }));
    assert.deepEqual(Object.keys(fields), ['a', 'b']);
    assert.deepEqual(z.object({ ...fields }).parse({ a: 'x', b: 1 }), { a: 'x', b: 1 });
  });

  it('write the same JSON Schema as the eager schema, descriptions included', () => {
    const Id = lazy(() => z.string().regex(/^[a-z]+$/));
    const GoalId = lazy(() => Id.describe('the goal'));
    const eager = z.object({
      goalId: z
        .string()
        .regex(/^[a-z]+$/)
        .describe('the goal'),
      other: z
        .string()
        .regex(/^[a-z]+$/)
        .optional(),
      list: z.array(z.string().regex(/^[a-z]+$/)),
    });
    const viaLazy = lazy(() => z.object({ goalId: GoalId, other: Id.optional(), list: z.array(Id) }));
    assert.deepEqual(z.toJSONSchema(viaLazy), z.toJSONSchema(eager));
  });

  it('lazyArray is an array to Array.isArray, map, includes and spreading', () => {
    let built = 0;
    const names = lazyArray(() => {
      built++;
      return ['a', 'b', 'c'];
    });
    assert.equal(built, 0);
    assert.ok(Array.isArray(names));
    assert.equal(names.length, 3);
    assert.ok(names.includes('b'));
    assert.deepEqual(
      names.map((n) => n.toUpperCase()),
      ['A', 'B', 'C'],
    );
    assert.deepEqual([...names], ['a', 'b', 'c']);
    assert.equal(built, 1);
  });
});

/**
 * The start-up rule (issue 18): no schema is built at module load. A top-level `const` whose value
 * is a zod call (or a call on another schema) must be wrapped in `lazy`, or every `loopx` call
 * pays for building it.
 */
describe('start-up rules for src/', () => {
  it('no top-level const is a zod schema built at load', () => {
    const root = path.join(__dirname, '..', '..', '..', '..', 'src');
    const files: string[] = [];
    const walk = (d: string) => {
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        const p = path.join(d, e.name);
        if (e.isDirectory()) walk(p);
        else if (p.endsWith('.ts')) files.push(p);
      }
    };
    walk(root);
    const eager: string[] = [];
    for (const f of files) {
      const text = fs.readFileSync(f, 'utf8');
      if (!text.includes("from 'zod'")) continue;
      const src = ts.createSourceFile(f, text, ts.ScriptTarget.Latest, true);
      for (const st of src.statements) {
        if (!ts.isVariableStatement(st)) continue;
        for (const d of st.declarationList.declarations) {
          let e: ts.Node | undefined = d.initializer;
          while (e && (ts.isCallExpression(e) || ts.isPropertyAccessExpression(e))) e = e.expression;
          if (e && ts.isIdentifier(e) && e.text === 'z') {
            const line = src.getLineAndCharacterOfPosition(d.getStart(src)).line + 1;
            eager.push(`${path.relative(root, f)}:${line} ${d.name.getText(src)}`);
          }
        }
      }
    }
    assert.deepEqual(eager, [], 'wrap these in lazy(() => ...) (src/core/model/lazy.ts)');
  });

  it('nothing in src/ calls Intl (localeCompare, toLocaleString): its first use costs a call ~10 ms', () => {
    const root = path.join(__dirname, '..', '..', '..', '..', 'src');
    const found: string[] = [];
    const walk = (d: string) => {
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        const p = path.join(d, e.name);
        if (e.isDirectory()) walk(p);
        else if (p.endsWith('.ts'))
          fs.readFileSync(p, 'utf8')
            .split('\n')
            .forEach((line, i) => {
              if (/\.localeCompare\(|\.toLocale\w*\(|\bIntl\./.test(line))
                found.push(`${path.relative(root, p)}:${i + 1}`);
            });
      }
    };
    walk(root);
    // views/people-text.ts falls back to Intl for exponents and infinities only; rules/recurrence.ts
    // needs a zone's offsets, and only when a recurring todo is looked at.
    assert.deepEqual(
      found.map((f) => f.replace(/:\d+$/, '')),
      ['core/rules/recurrence.ts', 'core/views/people-text.ts'],
      'use compareText (src/core/model/order.ts) or num/usd (src/core/views/people-text.ts)',
    );
  });
});
