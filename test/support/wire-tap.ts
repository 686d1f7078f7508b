/**
 * A `fetch` for an official SDK client that keeps a copy of every response body as it came on
 * the wire, for what the SDK reads past or hides (tollgate's summary comment after an error).
 */
export function wireTap(): { fetch: typeof fetch; lastBody: () => Promise<string> } {
  const bodies: Promise<string>[] = [];
  const tapped: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (!response.body) return response;
    // tee: the SDK leaving its branch after an error does not stop the copy.
    const [copy, theirs] = response.body.tee();
    bodies.push(new Response(copy).text());
    return new Response(theirs, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
  return {
    fetch: tapped,
    lastBody: () => {
      const body = bodies.at(-1);
      if (!body) throw new Error("no response came through the tap");
      return body;
    },
  };
}
