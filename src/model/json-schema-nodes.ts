/**
 * Every subschema of a JSON Schema, the root first: what its properties, items, combinators and
 * definitions hold. For the checks that decide whether a provider's strict mode takes a schema.
 */
export function* schemaNodes(schema: unknown): Generator<Record<string, unknown>> {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return;
  const node = schema as Record<string, unknown>;
  yield node;
  for (const key of ["properties", "$defs", "definitions"]) {
    const children = node[key];
    if (typeof children === "object" && children !== null) for (const child of Object.values(children)) yield* schemaNodes(child);
  }
  for (const key of ["anyOf", "oneOf", "allOf", "prefixItems"]) {
    const children = node[key];
    if (Array.isArray(children)) for (const child of children) yield* schemaNodes(child);
  }
  if (Array.isArray(node.items)) for (const child of node.items) yield* schemaNodes(child);
  else yield* schemaNodes(node.items);
  if (typeof node.additionalProperties === "object") yield* schemaNodes(node.additionalProperties);
}

const isObjectNode = (node: Record<string, unknown>) => node.type === "object" || (node.type === undefined && "properties" in node);

/** A node's properties, by name. */
export function propertiesOf(node: Record<string, unknown>): [string, unknown][] {
  return typeof node.properties === "object" && node.properties !== null ? Object.entries(node.properties) : [];
}

/** The names of a node's properties that it does not require. */
export function optionalPropertiesOf(node: Record<string, unknown>): string[] {
  const required = Array.isArray(node.required) ? node.required : [];
  return propertiesOf(node)
    .map(([name]) => name)
    .filter((name) => !required.includes(name));
}

/**
 * OpenAI's strict mode (structured outputs): every object closed (`additionalProperties: false`)
 * with every one of its properties required; the API refuses any other schema with a 400.
 */
export function meetsOpenAIStrictRules(schema: Record<string, unknown>): boolean {
  for (const node of schemaNodes(schema)) {
    if (!isObjectNode(node)) continue;
    if (node.additionalProperties !== false || optionalPropertiesOf(node).length > 0) return false;
  }
  return true;
}

/**
 * The keywords every model's strict mode takes (OpenAI's structured outputs, "supported schemas"):
 * a schema using any other (`default`, `allOf`, `not`, `if`, `pattern` on some models…) is refused
 * in strict mode with a 400 for the whole request.
 */
const OPENAI_STRICT_KEYWORDS = new Set(["type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf", "description", "$ref", "$defs"]);

/**
 * A schema tollgate may send in OpenAI's strict mode on the client's behalf (an Anthropic client's
 * output_config.format, which Claude decodes to): an object at the root, meeting the strict rules,
 * with only the keywords strict mode takes. Any other goes as a hint, never as a 400.
 */
export function fitsOpenAIStrictMode(schema: Record<string, unknown>): boolean {
  if (schema.type !== "object" || !meetsOpenAIStrictRules(schema)) return false;
  for (const node of schemaNodes(schema)) {
    if (Object.keys(node).some((keyword) => !OPENAI_STRICT_KEYWORDS.has(keyword))) return false;
  }
  return true;
}

/** Keywords whose structure the Anthropic SDK's transformJSONSchema would turn into description text. */
const UNCARRIED_STRUCTURE = ["definitions", "patternProperties", "prefixItems", "if", "then", "else", "not", "dependentSchemas", "unevaluatedProperties"];

/**
 * A schema Claude's structured outputs decode to as the client meant it: every object closed, and
 * nothing the Anthropic SDK's transform would flatten into a description (draft-07 `definitions`
 * and the `$ref`s into them, a nullable object written `type: ["object", "null"]`, tuples, an open
 * map): sent natively, such a schema would decode to less than the client asked for.
 */
export function claudeDecodesAsMeant(schema: Record<string, unknown>): boolean {
  for (const node of schemaNodes(schema)) {
    if (UNCARRIED_STRUCTURE.some((key) => key in node)) return false;
    if (typeof node.$ref === "string" && !/^#\/\$defs\/[^/]+$/.test(node.$ref)) return false;
    if (Array.isArray(node.type) && node.type.some((type) => type === "object" || type === "array")) return false;
    if (Array.isArray(node.items)) return false;
    if (isObjectNode(node) && node.additionalProperties !== false) return false;
  }
  return true;
}
