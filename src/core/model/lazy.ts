/**
 * A value built on first use, standing in for it meanwhile.
 *
 * zod builds a schema's whole object graph where it is declared, about 15 µs a node, and the core
 * declares its schemas at module level: a `loopx` call used to spend 30-40 ms of its start-up
 * building schemas it never parsed with. `lazy(() => z.object(...))` is typed as the schema and
 * behaves as it (properties, methods, `instanceof`, spreading, keys), but builds it only when it
 * is first touched; schemas built from lazy ones stay lazy until they are used.
 *
 * `build` must not have side effects: when it runs is not part of the contract.
 */
import { z } from 'zod';

export function lazy<T extends object>(build: () => T): T {
  return lazyOn({}, build);
}

/** `lazy` for an array: `Array.isArray` asks the stand-in, so it must be one. */
export function lazyArray<T extends readonly unknown[]>(build: () => T): T {
  return lazyOn([] as unknown as T, build);
}

/** What zod keeps of a schema, as far as the stand-in needs it (see `zodInternals`). */
interface ZodInternals {
  processJSONSchema?: (ctx: { seen: Map<object, unknown> }, ...rest: unknown[]) => unknown;
}

function lazyOn<T extends object>(standIn: object, build: () => T): T {
  let value: T | undefined;
  let internals: ZodInternals | undefined;
  const real = (): T => {
    if (value !== undefined) return value;
    value = build();
    // The schema's description lives in zod's registry, keyed by the schema: the stand-in's too.
    const meta = isSchema(value) ? z.globalRegistry.get(value) : undefined;
    if (meta) z.globalRegistry.add(proxy as z.ZodType, meta);
    return value;
  };
  const proxy = new Proxy(standIn, {
    get: (_, key) => {
      const v = real();
      if (key === '_zod' && isSchema(v)) return (internals ??= zodInternals(v, proxy));
      return Reflect.get(v, key, v);
    },
    set: (_, key, to) => Reflect.set(real(), key, to),
    has: (_, key) => Reflect.has(real(), key),
    ownKeys: () => {
      const keys = Reflect.ownKeys(real());
      // A proxy must list the stand-in's own fixed keys (an array's `length`).
      for (const k of Reflect.ownKeys(standIn)) if (!keys.includes(k)) keys.push(k);
      return keys;
    },
    getOwnPropertyDescriptor: (_, key) => {
      const d = Reflect.getOwnPropertyDescriptor(real(), key);
      // Reported as configurable unless the stand-in has it fixed too (a proxy's invariant).
      const fixed = Reflect.getOwnPropertyDescriptor(standIn, key);
      if (fixed && !fixed.configurable) return d ? { ...d, configurable: false } : fixed;
      return d ? { ...d, configurable: true } : undefined;
    },
    defineProperty: (_, key, d) => Reflect.defineProperty(real(), key, d),
    deleteProperty: (_, key) => Reflect.deleteProperty(real(), key),
    getPrototypeOf: () => Reflect.getPrototypeOf(real()),
  });
  return proxy as T;
}

const isSchema = (v: object): v is z.ZodType => '_zod' in v;

/**
 * The schema's internals as zod sees them through the stand-in. One difference: zod's JSON Schema
 * writer files what it wrote under the schema it was handed (the stand-in) and then looks it up
 * under the schema itself, so the stand-in files it under both.
 */
function zodInternals(schema: z.ZodType, standIn: object): ZodInternals {
  const own = schema._zod as unknown as ZodInternals;
  return new Proxy(own, {
    get: (t, key) => {
      if (key !== 'processJSONSchema' || !t.processJSONSchema) return Reflect.get(t, key, t);
      const process = t.processJSONSchema;
      return (ctx: { seen: Map<object, unknown> }, ...rest: unknown[]) => {
        if (!ctx.seen.has(schema) && ctx.seen.has(standIn)) ctx.seen.set(schema, ctx.seen.get(standIn));
        return process(ctx, ...rest);
      };
    },
  });
}
