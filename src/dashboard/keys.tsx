import { Hono, type Context } from 'hono';
import type { AppEnv } from '../env';
import { requireSession } from '../middleware/session';
import { CreateApiKeyBody } from '../routes/api-keys';
import { createApiKey, listApiKeys, MAX_ACTIVE_KEYS, revokeApiKey, type CreatedKey } from '../services/api-keys';
import { Alert, Field, Notice, When } from './components';
import { handleForm, idFromPath, parseForm, readForm, sameOriginForm, type FormFields, type FormProblem } from './forms';
import { page } from './layout';

// API keys: the same create, list and revoke as /api-keys. A new key is shown once, in the answer to the form post
// (a 200 page, never a redirect: the key is never in a URL, a cookie or any later page).

interface KeysView {
  created?: CreatedKey;
  values?: FormFields;
  problem?: FormProblem;
}

async function keysPage(c: Context<AppEnv>, { created, values, problem }: KeysView, status: 200 | FormProblem['status'] = 200) {
  const keys = await listApiKeys(c.var.db, c.var.session.userId);
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
          <section class="card" aria-labelledby="create-key">
            <h2 id="create-key">Create a key</h2>
            <Alert problem={problem} />
            <form method="post" action="/dashboard/keys" class="row">
              <Field name="name" label="Name" value={values?.name} problem={problem} required maxlength={100} />
              <button type="submit">Create key</button>
            </form>
            <p class="muted">{`At most ${MAX_ACTIVE_KEYS} active keys.`}</p>
          </section>
          <h2>Active keys</h2>
          {keys.length === 0 ? (
            <p class="empty">No active keys. Create one to use the API.</p>
          ) : (
            <div class="table-wrap">
              <table>
                <caption class="visually-hidden">Active API keys</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Key</th>
                    <th scope="col" class="hide-narrow">Last used</th>
                    <th scope="col" class="hide-narrow">Created</th>
                    <th scope="col">
                      <span class="visually-hidden">Action</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {keys.map((key) => (
                    <tr>
                      <td>{key.name}</td>
                      <td>
                        <code>{key.key_preview}</code>
                      </td>
                      <td class="hide-narrow">
                        <When iso={key.last_used_at} />
                      </td>
                      <td class="hide-narrow">
                        <When iso={key.created_at} />
                      </td>
                      <td>
                        <form method="post" action={`/dashboard/keys/${key.id}/revoke`} class="inline">
                          <button type="submit" class="danger">
                            Revoke
                          </button>
                        </form>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      ),
    },
    status,
  );
}

export const keysPages = new Hono<AppEnv>()
  .get('/keys', requireSession, (c) => keysPage(c, {}))
  .post('/keys', sameOriginForm, requireSession, async (c) => {
    const fields = await readForm(c);
    return handleForm(
      c,
      async () => {
        const { name } = parseForm(CreateApiKeyBody, fields);
        return keysPage(c, { created: await createApiKey(c.var.db, c.var.session.userId, name) });
      },
      (problem) => keysPage(c, { values: fields, problem }, problem.status),
    );
  })
  .post('/keys/:id/revoke', sameOriginForm, requireSession, async (c) => {
    await revokeApiKey(c.var.db, c.var.session.userId, idFromPath(c.req.param('id'), 'API key'));
    return c.redirect('/dashboard/keys', 303);
  });
