/** A new request id: always tollgate's own (a client-chosen id could collide in the cost ledger). */
export function newRequestId(): string {
  return `req_${crypto.randomUUID().replaceAll("-", "")}`;
}
