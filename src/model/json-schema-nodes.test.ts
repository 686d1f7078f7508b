import { describe, expect, it } from "vitest";
import { claudeDecodesAsMeant, meetsOpenAIStrictRules } from "./json-schema-nodes.ts";

const closed = (properties: Record<string, unknown>, required = Object.keys(properties)) => ({ type: "object", properties, required, additionalProperties: false });

describe("meetsOpenAIStrictRules", () => {
  it("takes objects closed with every property required, at any depth", () => {
    expect(meetsOpenAIStrictRules(closed({ city: { type: "string" }, where: closed({ lat: { type: "number" } }) }))).toBe(true);
  });

  it("refuses an optional property (Anthropic's strict tools allow them) or an open object, at any depth", () => {
    expect(meetsOpenAIStrictRules(closed({ city: { type: "string" }, unit: { type: "string" } }, ["city"]))).toBe(false);
    expect(meetsOpenAIStrictRules(closed({ where: { type: "object", properties: { lat: { type: "number" } }, required: ["lat"] } }))).toBe(false);
    expect(meetsOpenAIStrictRules(closed({ list: { type: "array", items: closed({ a: { type: "string" } }, []) } }))).toBe(false);
  });
});

describe("claudeDecodesAsMeant", () => {
  it("takes closed objects, $defs and their $refs, nullable primitives", () => {
    expect(claudeDecodesAsMeant({ ...closed({ home: { $ref: "#/$defs/address" }, nick: { type: ["string", "null"] } }), $defs: { address: closed({ street: { type: "string" } }) } })).toBe(true);
  });

  it("refuses what the transform would flatten into a description: an open map, draft-07 definitions, a nullable object, a tuple", () => {
    expect(claudeDecodesAsMeant(closed({ scores: { type: "object", additionalProperties: { type: "number" } } }))).toBe(false);
    expect(claudeDecodesAsMeant({ ...closed({ home: { $ref: "#/definitions/address" } }), definitions: { address: closed({ street: { type: "string" } }) } })).toBe(false);
    expect(claudeDecodesAsMeant(closed({ home: { ...closed({ street: { type: "string" } }), type: ["object", "null"] } }))).toBe(false);
    expect(claudeDecodesAsMeant(closed({ pair: { type: "array", items: [{ type: "string" }, { type: "number" }] } }))).toBe(false);
  });
});
