/**
 * Keeps the neutral request free of `key: undefined`, so converters can spread it safely. It
 * copies rather than deletes: deleting a property turns a V8 object into a slow dictionary, and
 * the request is read and spread at every step of its way.
 */
export function dropUndefined<T extends object>(value: T): T {
  const kept = {} as T;
  for (const key of Object.keys(value) as (keyof T)[]) if (value[key] !== undefined) kept[key] = value[key];
  return kept;
}
