// Virtual keys are stored only as sha256 hashes; the keys are long random strings, so an
// unsalted hash is enough. Every request hashes its key, so where the runtime has node:crypto
// (Node, Workers with nodejs_compat) the synchronous hash is used: 1.3 µs against 41 µs for
// Web Crypto's async digest on Node 20. Elsewhere Web Crypto keeps this runtime-neutral.

type NodeCrypto = { createHash(algorithm: string): { update(text: string): { digest(encoding: "hex"): string } } };
const nodeCrypto = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.("node:crypto") as
  | NodeCrypto
  | undefined;
const encoder = new TextEncoder();

export async function sha256Hex(text: string): Promise<string> {
  if (nodeCrypto) return nodeCrypto.createHash("sha256").update(text).digest("hex");
  const digest = await crypto.subtle.digest("SHA-256", encoder.encode(text));
  return bytesToHex(new Uint8Array(digest));
}

export async function hashKey(key: string): Promise<string> {
  return `sha256:${await sha256Hex(key)}`;
}

export function generateKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `tg_${bytesToBase64Url(bytes)}`;
}

/** Compares equal-length strings without an early exit, so timing says nothing about where they differ. */
export function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

function bytesToHex(bytes: Uint8Array): string {
  let hex = "";
  for (const byte of bytes) hex += byte.toString(16).padStart(2, "0");
  return hex;
}

function bytesToBase64Url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
