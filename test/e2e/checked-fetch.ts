import { checkedFetch, type Doc } from '../contract-check';

/**
 * Node's fetch against the dev server, every response checked against the document that server publishes. It reaches
 * that server alone: a URL on any other origin (a payment link pointing at a developer's own `npm run dev` on :8787,
 * say) fails the test instead of sending anything there.
 */
export function contractFetch(api: string) {
  const origin = new URL(api).origin;
  let doc: Promise<Doc> | undefined;
  return checkedFetch(
    (request) => {
      if (new URL(request.url).origin !== origin) throw new Error(`the e2e suite talks only to its own server (${origin}), not to ${request.url}`);
      return fetch(request);
    },
    () => (doc ??= fetch(`${api}/openapi.json`).then((r) => r.json() as Promise<Doc>)),
  );
}
