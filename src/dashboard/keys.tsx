import { Hono, type Context } from 'hono';
import type { AppEnv } from '../env';
import { requireSession } from '../middleware/session';
import { runIdempotent } from '../middleware/idempotency';
import { createApiKey, listApiKeys, MAX_ACTIVE_KEYS, revokeApiKey, type CreatedKey, type KeyRow } from '../services/accounts/keys';
import { Alert, Field, IdempotencyKey, Notice, Select, When } from './components';
import { createTestKeyFromLive, listTestKeys, revokeTestKey } from '../services/sandbox/keys';
import { revokeTestKeysBelow } from '../services/sandbox/key-makers';
import { sandboxDatabase } from '../middleware/mode';
import { fieldError } from '../lib/errors';
import { readAs } from '../services/caller';
import { formHandler, idFromPath, sameOriginForm, type FormFields, type FormProblem } from './forms';
import { page } from './layout';
import { KeyLimitFields, keyLimitsText, keyRequestFromForm } from './key-limits';
import { DataTable, type Column } from './tables';

// API keys: the same create, list and revoke as /api-keys. A new key is shown once, in the answer to the form post
// (a 200 page, never a redirect: the key is never in a URL, a cookie or any later page). The form carries an
// idempotency_key like the money forms: sent again (a reload of the answer, a double click), it creates nothing and
// says which key was already created, without the key, which is stored nowhere but as its hash.

const KEY_COLUMNS: Column<Awaited<ReturnType<typeof listApiKeys>>[number]>[] = [
  { label: 'Name', cell: (key) => key.name },
  // The mode rides in the key's cell: one more column made the table scroll sideways at 1280 px.
  {
    label: 'Key',
    cell: (key) => (
      <>
        <code>{key.key_preview}</code> <span class={`badge mode-${key.mode}`}>{key.mode === 'test' ? 'Test' : 'Live'}</span>
      </>
    ),
  },
  { label: 'May do', cell: (key) => keyLimitsText(key) },
  { label: 'Last used', cell: (key) => <When iso={key.last_used_at} /> },
  { label: 'Created', cell: (key) => <When iso={key.created_at} /> },
  {
    label: 'Action',
    labelHidden: true,
    cell: (key) => (
      <form method="post" action={`/dashboard/keys/${key.id}/revoke`} class="inline">
        {key.mode === 'test' && <input type="hidden" name="mode" value="test" />}
        <button type="submit" class="danger">
          Revoke
        </button>
      </form>
    ),
  },
];

interface KeysView {
  created?: CreatedKey;
  /** The key an earlier sending of the same form created (a replay): named, never shown. */
  alreadyCreated?: KeyRow;
  values?: FormFields;
  problem?: FormProblem;
}

async function keysPage(c: Context<AppEnv>, { created, alreadyCreated, values, problem }: KeysView, status: 200 | FormProblem['status'] = 200) {
  const liveKeys = await listApiKeys(c.var.db, c.var.caller);
  // Test keys live in the test-mode sandbox: a second read there, by the user the live read proved.
  const sandbox = sandboxDatabase(c.env);
  const testKeys = sandbox && c.var.caller.proved ? await listTestKeys(sandbox, c.var.caller.proved.userId) : [];
  const keys = [...liveKeys, ...testKeys];
  return page(
    c,
    {
      title: 'API keys',
      section: '/dashboard/keys',
      children: (
        <>
          {created && (
            <section class="card" aria-labelledby="new-key">
              <h2 id="new-key">{`New key "${created.name}"`}</h2>
              <Notice>Copy this key now. It will not be shown again.</Notice>
              <p>Your new API key:</p>
              <code class="secret" id="new-api-key">
                {created.key}
              </code>
              <p class="muted">{'Send it as the X-API-Key header to /api/v2.'}</p>
            </section>
          )}
          {alreadyCreated && (
            <section class="card" aria-labelledby="key-already-created">
              <h2 id="key-already-created">Key already created</h2>
              <Notice>
                {`This form was already sent: the key "${alreadyCreated.name}" (${alreadyCreated.key_preview}) was created then and is not shown again. If you did not copy it, revoke it and create another.`}
              </Notice>
            </section>
          )}
          <section class="card" aria-labelledby="create-key">
            <h2 id="create-key">Create a key</h2>
            <Alert problem={problem} />
            <form method="post" action="/dashboard/keys" class="stacked-form">
              <IdempotencyKey />
              <Field name="name" label="Name" value={values?.name} problem={problem} required maxlength={100} />
              {sandbox && (
                <Select
                  name="mode"
                  label="Mode"
                  options={[
                    { value: 'live', label: 'Live' },
                    { value: 'test', label: 'Test (sandbox: test money, generated codes)' },
                  ]}
                  value={values?.mode ?? 'live'}
                  problem={problem}
                />
              )}
              <KeyLimitFields values={values} problem={problem} />
              <button type="submit">Create key</button>
            </form>
            <p class="muted">{`At most ${MAX_ACTIVE_KEYS} active keys of each mode.`}</p>
          </section>
          <h2>Active keys</h2>
          <DataTable caption="Active API keys" rows={keys} empty="No active keys. Create one to use the API." columns={KEY_COLUMNS} />
        </>
      ),
    },
    status,
  );
}

export const keysPages = new Hono<AppEnv>()
  .get('/keys', requireSession, (c) => keysPage(c, {}))
  .post(
    '/keys',
    sameOriginForm,
    requireSession,
    formHandler(
      async (c, fields) => {
        const request = keyRequestFromForm(fields);
        if (request.mode === 'test') {
          // Written in the sandbox, which holds no idempotency record of the live form: a resent form makes another test key.
          const sandbox = sandboxDatabase(c.env);
          if (!sandbox) throw fieldError('mode', 'test mode is not enabled on this service');
          return keysPage(c, { created: await createTestKeyFromLive(c.var.db, sandbox, c.var.caller, request) });
        }
        const source = { key: fields.idempotency_key, field: 'idempotency_key' };
        const { body, replayed } = await runIdempotent<KeyRow, 200>(
          c,
          source,
          request,
          async (claim) => ({ status: 200, body: await createApiKey(c.var.db, c.var.caller, request, claim) }),
          { render: (snapshot) => ({ status: 200, body: snapshot as KeyRow }) },
        );
        return keysPage(c, replayed ? { alreadyCreated: body } : { created: body as CreatedKey });
      },
      (c, fields, problem) => keysPage(c, { values: fields, problem }, problem.status),
    ),
  )
  .post('/keys/:id/revoke', sameOriginForm, requireSession, async (c) => {
    const id = idFromPath(c.req.param('id'), 'API key');
    const sandbox = sandboxDatabase(c.env);
    // A post that is no form (or has no `mode`) revokes a live key, as before test mode.
    const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
    if (form.mode === 'test' && sandbox) {
      // The session is proved on live (a read), then the test key revoked in the sandbox.
      await readAs(c.var.db, c.var.caller, []);
      await revokeTestKey(sandbox, c.var.caller.proved!.userId, id);
    } else {
      await revokeApiKey(c.var.db, c.var.caller, id);
      // Its test children (in the sandbox) die with it.
      if (sandbox) await revokeTestKeysBelow(sandbox, id);
    }
    return c.redirect('/dashboard/keys', 303);
  });
