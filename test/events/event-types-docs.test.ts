import { describe, expect, it } from 'vitest';
import webhooksGuide from '../../docs/webhooks.md?raw';
import { EVENT_TYPES } from '../../src/db/schema';
import { call } from '../helpers';

// The webhooks guide lists every event type from the list the code uses (contract, "fourth pass"), and so does the
// OpenAPI document's enum: a new type added to EVENT_TYPES without its line in docs/webhooks.md fails here.

/** The types of the guide's event tables: a row starting with a backticked dotted name. */
const documented = () => [...webhooksGuide.matchAll(/^\| `([a-z_]+\.[a-z_]+)` \|/gm)].map((m) => m[1]);

describe('every event type, documented once, as the code lists them', () => {
  it('docs/webhooks.md lists exactly EVENT_TYPES', () => {
    expect(documented().length).toBe(new Set(documented()).size);
    expect([...documented()].sort()).toEqual([...EVENT_TYPES].sort());
  });

  it("the OpenAPI document's Event.type enum is EVENT_TYPES", async () => {
    const doc = (await call('/openapi.json')).json as { components: { schemas: Record<string, { properties: Record<string, { enum?: string[] }> }> } };
    expect([...(doc.components.schemas.Event.properties.type.enum ?? [])].sort()).toEqual([...EVENT_TYPES].sort());
  });
});
