import { CreateApiKeyBody, type CreateApiKeyRequest } from '../schemas/api-keys';
import { SCOPES, type Scope } from '../lib/scopes';
import { formatUsd } from '../lib/money';
import type { ApiKeyView } from '../services/accounts/keys';
import { Checkbox, Field, TextArea } from './components';
import { parseForm, type FormFields, type FormProblem } from './forms';

// The key form's limits: one checkbox per scope (all ticked by default), a daily spend limit, allowed IPs one a line,
// and an expiry date (the key stops at 00:00 UTC that day). Blank means none, as a session may grant anything.

const SCOPE_LABELS: Record<Scope, string> = {
  read: 'Read',
  orders: 'Orders',
  deposits: 'Deposits',
  account: 'Account',
  keys: 'Keys',
  webhooks: 'Webhooks',
};

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const blankToUndefined = (text: string | undefined) => (text === undefined || text.trim() === '' ? undefined : text.trim());

/** The key form as the API's body, through the same schema. */
export function keyRequestFromForm(fields: FormFields): CreateApiKeyRequest {
  const ips = (fields.allowed_ips ?? '').split(/\r?\n/).map((line) => line.trim()).filter((line) => line !== '');
  const expires = blankToUndefined(fields.expires_at);
  const input = {
    name: fields.name,
    // "Live" or "Test" (test mode); a post without it makes a live key.
    mode: blankToUndefined(fields.mode),
    // The page's form says it showed the checkboxes, so none ticked is refused; a post without them (a script that
    // sends only the name) gets every scope.
    scopes: fields.scope_choices === 'shown' ? SCOPES.filter((scope) => fields[`scope_${scope}`] === 'on') : undefined,
    spend_limit_per_day: blankToUndefined(fields.spend_limit_per_day),
    allowed_ips: ips.length > 0 ? ips : undefined,
    expires_at: expires && DATE.test(expires) ? `${expires}T00:00:00Z` : expires,
  };
  return parseForm(CreateApiKeyBody, input, ['spend_limit_per_day']);
}

/** The limits' controls in the key form; re-shown as sent after a refusal. */
export function KeyLimitFields({ values, problem: asSent }: { values?: FormFields; problem?: FormProblem }) {
  const problem = asSent && { ...asSent, fields: byControl(asSent.fields) };
  return (
    <>
      <fieldset>
        <legend>What the key may do</legend>
        <input type="hidden" name="scope_choices" value="shown" />
        {problem?.fields.scopes && <p class="field-error">{problem.fields.scopes.join(' ')}</p>}
        {SCOPES.map((scope) => (
          <Checkbox name={`scope_${scope}`} label={SCOPE_LABELS[scope]} checked={values ? values[`scope_${scope}`] === 'on' : true} />
        ))}
      </fieldset>
      <fieldset>
        <legend>Limits</legend>
        <Field name="spend_limit_per_day" label="Daily spend limit (USD, blank for none)" value={values?.spend_limit_per_day} problem={problem} inputmode="decimal" />
        <TextArea name="allowed_ips" label="Allowed IPs (one a line; blank for anywhere)" value={values?.allowed_ips} problem={problem} rows={3} />
        <p class="muted">Trying it locally (npm run dev)? Your requests come from 127.0.0.1.</p>
        <Field name="expires_at" label="Expires (YYYY-MM-DD, at 00:00 UTC; blank for never)" value={values?.expires_at} problem={problem} />
      </fieldset>
    </>
  );
}

/** The schema's messages by the form's controls: `allowed_ips.3` is the text area's, `scopes.0` the checkboxes'. */
const byControl = (fields: FormProblem['fields']) => {
  const merged: FormProblem['fields'] = {};
  for (const [path, messages] of Object.entries(fields)) (merged[path.split('.')[0]] ??= []).push(...messages);
  return merged;
};

/** The list's summary of a key's limits. */
export function keyLimitsText(key: ApiKeyView & { spent_today: number }): string {
  const parts = [key.scopes.length === SCOPES.length ? 'All scopes' : key.scopes.map((scope) => SCOPE_LABELS[scope]).join(', ')];
  if (key.spend_limit_per_day !== null) {
    parts.push(`${formatUsd(Math.round(key.spent_today * 100))} of ${formatUsd(Math.round(key.spend_limit_per_day * 100))} today`);
  }
  if (key.allowed_ips) parts.push(`from ${key.allowed_ips.join(', ')}`);
  if (key.expires_at) parts.push(`expires ${key.expires_at.slice(0, 10)}`);
  return parts.join('; ');
}
