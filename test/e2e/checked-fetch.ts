import { checkedFetch, type Doc } from '../contract-check';

/** Node's fetch against the dev server, every response checked against the document that server publishes. */
export function contractFetch(api: string) {
  let doc: Promise<Doc> | undefined;
  return checkedFetch(
    (request) => fetch(request),
    () => (doc ??= fetch(`${api}/openapi.json`).then((r) => r.json() as Promise<Doc>)),
  );
}
