import { createRoute, z } from '@hono/zod-openapi';
import { envelope, messageEnvelope, ok } from '../../lib/envelope';
import { createRouter, errorResponses, IdParams, idLinks, jsonBody, jsonResponse, needsScope } from '../openapi';
import { CreateApiKeyBody, ScopeName } from '../../schemas/api-keys';
import { createApiKey, listApiKeys, revokeApiKey } from '../../services/accounts/keys';
import { createTestKeyFromLive, revokeTestKey } from '../../services/sandbox/keys';
import { readAs } from '../../services/caller';
import { revokeTestKeysBelow } from '../../services/sandbox/key-makers';
import { ApiError, fieldError } from '../../lib/errors';
import { sandboxDatabase } from '../../middleware/mode';

const RevokeQuery = z.object({
  mode: z
    .enum(['live', 'test'], 'mode must be live or test')
    .optional()
    .openapi({ description: "Which mode's key the id names; default the caller's own. `test` with a live key revokes a test key" }),
});

/** A key's mode, on every key answer. */
const KeyMode = z.enum(['live', 'test']).openapi({ description: '`test`: a sk_test_ key, answered from the test-mode sandbox' });

/** What a key may do, shown on every key, and the key that made it. */
const keyLimits = {
  created_by_key_id: z
    .number()
    .int()
    .nullable()
    .openapi({ description: 'The API key that made this one (its maker: this key never outlives it); null when made in the dashboard or by the operator' }),
  scopes: z.array(ScopeName),
  spend_limit_per_day: z.number().nullable().openapi({ description: 'USD per UTC day; null: no limit' }),
  allowed_ips: z.array(z.string()).nullable().openapi({ description: 'addresses and CIDR ranges; null: anywhere' }),
  expires_at: z.string().nullable().openapi({ format: 'date-time', description: 'null: never' }),
};

const ApiKey = z
  .object({
    id: z.number().int(),
    name: z.string(),
    key_preview: z.string().openapi({ example: 'sk_live_****a1B2' }),
    mode: KeyMode,
    last_used_at: z.string().nullable().openapi({ format: 'date-time' }),
    created_at: z.string().openapi({ format: 'date-time' }),
    ...keyLimits,
    spent_today: z.number().openapi({
      description: "USD of the purchases since 00:00 UTC of this key and of every key made from it (revoked ones too), cancelled ones included: what its spend_limit_per_day counts",
    }),
  })
  .openapi('ApiKey');

const CreatedApiKey = z
  .object({
    id: z.number().int(),
    name: z.string(),
    key: z.string().openapi({ description: 'the full key; shown only in this response', example: 'sk_live_' + 'x'.repeat(40) }),
    api_key: z.string().openapi({ description: 'same value as `key`' }),
    key_preview: z.string(),
    mode: KeyMode,
    created_at: z.string().openapi({ format: 'date-time' }),
    ...keyLimits,
  })
  .openapi('CreatedApiKey');

const tags = ['API keys'];

export const apiKeysRouter = createRouter()
  .openapi(
    createRoute({
      method: 'get',
      path: '/',
      operationId: 'listApiKeys',
      tags,
      summary: 'List active API keys',
      ...needsScope('read'),
      responses: { 200: jsonResponse(envelope(z.array(ApiKey)), 'Active keys, newest first'), ...errorResponses(401, 429) },
    }),
    async (c) => c.json(ok(await listApiKeys(c.var.db, c.var.caller)), 200),
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/',
      operationId: 'createApiKey',
      tags,
      summary: 'Create an API key (at most 5 active of each mode)',
      ...needsScope('keys'),
      request: { body: jsonBody(CreateApiKeyBody) },
      responses: {
        201: jsonResponse(envelope(CreatedApiKey), 'The new key; the full key is never shown again', idLinks('/data/id', { revokeApiKey: 'id' })),
        ...errorResponses(400, 401, 403, 422, 429),
      },
    }),
    async (c) => {
      const body = c.req.valid('json');
      // A key makes keys of its own mode by default; a test key makes only test keys; a live key may make a test key,
      // written in the sandbox (two round trips: src/services/sandbox/keys.ts).
      const mode = body.mode ?? c.var.mode;
      const request = { ...body, mode };
      let key;
      if (mode === c.var.mode) key = await createApiKey(c.var.db, c.var.caller, request);
      else if (mode === 'live') {
        throw new ApiError('INSUFFICIENT_SCOPE', 'A test key makes only test keys.', { mode: ['a test key makes only test keys'] });
      } else {
        const sandbox = sandboxDatabase(c.env);
        if (!sandbox) throw fieldError('mode', 'test mode is not enabled on this service');
        key = await createTestKeyFromLive(c.var.db, sandbox, c.var.caller, request);
      }
      return c.json(ok(key, 'API key created. Store it now: it will not be shown again.'), 201);
    },
  )
  .openapi(
    createRoute({
      method: 'delete',
      path: '/{id}',
      operationId: 'revokeApiKey',
      tags,
      summary: 'Revoke an API key',
      description:
        "Revokes a key of the caller's own mode, and every key made from it. With a live key, `?mode=test` revokes the caller's " +
        'test key of that id instead (proved on live, revoked in the sandbox: two round trips); a test key\'s id without it is a 404 ' +
        'that says so. A test key revokes only test keys (`mode=live` → 403 `INSUFFICIENT_SCOPE`).',
      ...needsScope('keys'),
      request: { params: IdParams, query: RevokeQuery },
      responses: { 200: jsonResponse(messageEnvelope, 'Revoked'), ...errorResponses(401, 403, 404, 422, 429) },
    }),
    async (c) => {
      const id = c.req.valid('param').id;
      const mode = c.req.valid('query').mode ?? c.var.mode;
      if (mode !== c.var.mode) {
        if (mode === 'live') throw new ApiError('INSUFFICIENT_SCOPE', 'A test key revokes only test keys.', { mode: ['a test key revokes only test keys'] });
        const sandbox = sandboxDatabase(c.env);
        if (!sandbox) throw fieldError('mode', 'test mode is not enabled on this service');
        // The live key is proved (with its scope and address) on live, then the test key revoked in the sandbox.
        await readAs(c.var.db, c.var.caller, []);
        await revokeTestKey(sandbox, c.var.caller.proved!.userId, id);
        return c.json({ success: true as const, message: 'Test API key revoked.' }, 200);
      }
      await revokeApiKey(c.var.db, c.var.caller, id).catch((err: unknown) => {
        // A live key asked for an id it does not have: perhaps a test key's, which lives in the sandbox.
        if (c.var.mode === 'live' && err instanceof ApiError && err.code === 'NOT_FOUND') {
          throw new ApiError('NOT_FOUND', `No live API key ${id} of yours. To revoke a test key, add mode=test: DELETE /api/v2/api-keys/${id}?mode=test.`);
        }
        throw err;
      });
      // A live key's test children (in the sandbox) die with it: one more batch, on the sandbox.
      const sandbox = c.var.mode === 'live' ? sandboxDatabase(c.env) : null;
      if (sandbox) await revokeTestKeysBelow(sandbox, id);
      return c.json({ success: true as const, message: 'API key revoked.' }, 200);
    },
  );
