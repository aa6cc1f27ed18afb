import type { Child } from 'hono/jsx';
import { formatUsd } from '../lib/money';
import type { FormProblem } from './forms';

/** An amount in cents; `null` (a vendor notification that reports no amount, e.g. BTCPay's) shows as "not reported". */
export const Money = ({ cents }: { cents: number | null }) =>
  cents === null ? <span class="muted">not reported</span> : <span class="money">{formatUsd(cents)}</span>;

/** One figure of a `<dl class="stats">`. */
export const Stat = ({ label, children }: { label: string; children?: Child }) => (
  <div>
    <dt>{label}</dt>
    <dd>{children}</dd>
  </div>
);

/** `2026-11-21 12:00 UTC`, machine-readable in `datetime`. */
export const When = ({ iso }: { iso: string | null }) =>
  iso ? <time datetime={iso}>{`${iso.slice(0, 16).replace('T', ' ')} UTC`}</time> : <span>never</span>;

export const Status = ({ value }: { value: string }) => <span class={`status status-${value}`}>{value}</span>;

/** A fresh key per rendered money form: a double click or a re-sent form makes one effect. */
export const IdempotencyKey = () => <input type="hidden" name="idempotency_key" value={crypto.randomUUID()} />;

const RATE_LIMITED_MESSAGE = 'Too many attempts. Wait a minute, then try again.';
// The API's GATEWAY_UNAVAILABLE, said to a person: the amount typed is still in the form.
const PROVIDER_DOWN_MESSAGE =
  'The payment provider could not be reached, so no deposit was made and nothing was charged. Please try again in a minute.';
/** Fields a form carries without a visible control: their messages go into the alert. */
const HIDDEN_FIELDS = ['product_id', 'idempotency_key'];

/** The refusal of the last post, announced to screen readers; field messages are shown next to their fields. */
export function Alert({ problem }: { problem?: FormProblem | null }) {
  if (!problem) return null;
  const hidden = HIDDEN_FIELDS.flatMap((name) => problem.fields[name] ?? []);
  const message =
    problem.code === 'RATE_LIMITED'
      ? RATE_LIMITED_MESSAGE
      : problem.code === 'GATEWAY_UNAVAILABLE'
        ? PROVIDER_DOWN_MESSAGE
        : problem.code === 'VALIDATION_FAILED'
          ? ['Please correct the fields marked below.', ...hidden].join(' ')
          : problem.message;
  return (
    <p class="alert" role="alert">
      {message}
    </p>
  );
}

export const Notice = ({ children }: { children?: Child }) => (
  <p class="notice" role="status">
    {children}
  </p>
);

interface FieldProps {
  name: string;
  label: string;
  type?: 'text' | 'email' | 'password' | 'number' | 'date';
  value?: string;
  problem?: FormProblem | null;
  /** Distinguishes the same field in several forms of one page (the shop's products). */
  idPrefix?: string;
  autocomplete?: string;
  required?: boolean;
  inputmode?: 'decimal' | 'numeric';
  min?: string;
  step?: string;
  maxlength?: number;
}

/** A field's control id, the attributes that tie its error message to it, and the message (the API's) itself. */
function fieldState(idPrefix: string, name: string, problem: FormProblem | null | undefined) {
  const id = `${idPrefix}-${name}`;
  const messages = problem?.fields[name];
  if (!messages) return { id, invalid: {}, error: null };
  return {
    id,
    invalid: { 'aria-invalid': 'true', 'aria-describedby': `${id}-error` },
    error: (
      <p class="field-error" id={`${id}-error`}>
        {messages.join(' ')}
      </p>
    ),
  };
}

/** A labelled input with its error message right below it. Passwords are never sent back into the page. */
export function Field({ name, label, type = 'text', value, problem, idPrefix = 'field', ...rest }: FieldProps) {
  const { id, invalid, error } = fieldState(idPrefix, name, problem);
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} name={name} type={type} value={type === 'password' ? undefined : value} {...invalid} {...rest} />
      {error}
    </div>
  );
}

interface SelectProps {
  name: string;
  label: string;
  /** Values shown as they are, or `{ value, label }` where people should read something else. */
  options: readonly (string | number | { value: string; label: string })[];
  value?: string;
  problem?: FormProblem | null;
  idPrefix?: string;
}

export function Select({ name, label, options, value, problem, idPrefix = 'field' }: SelectProps) {
  const { id, invalid, error } = fieldState(idPrefix, name, problem);
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} name={name} {...invalid}>
        {options.map((option) => {
          const { value: optionValue, label: optionLabel } = typeof option === 'object' ? option : { value: String(option), label: String(option) };
          return (
            <option value={optionValue} selected={optionValue === value}>
              {optionLabel}
            </option>
          );
        })}
      </select>
      {error}
    </div>
  );
}

/** Previous / next links of a paginated page (`?page=`, after the page's other query parameters, e.g. a search). */
export function Pager({ path, page, totalPages, query = {} }: { path: string; page: number; totalPages: number; query?: Record<string, string | undefined> }) {
  if (totalPages <= 1) return null;
  const to = (n: number) => {
    const params = new URLSearchParams(Object.entries(query).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''));
    params.set('page', String(n));
    return `${path}?${params}`;
  };
  return (
    <nav class="pager" aria-label="Pages">
      {page > 1 ? <a href={to(page - 1)}>Previous page</a> : <span />}
      <span>{`Page ${page} of ${totalPages}`}</span>
      {page < totalPages ? <a href={to(page + 1)}>Next page</a> : <span />}
    </nav>
  );
}

/** A labelled multi-line text input with its error message. */
export function TextArea({ name, label, problem, rows = 8, idPrefix = 'field', value, maxlength }: { name: string; label: string; problem?: FormProblem | null; rows?: number; idPrefix?: string; value?: string; maxlength?: number }) {
  const { id, invalid, error } = fieldState(idPrefix, name, problem);
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <textarea id={id} name={name} rows={rows} maxlength={maxlength} {...invalid}>
        {value}
      </textarea>
      {error}
    </div>
  );
}

/** A labelled file input (a form with it posts multipart/form-data). */
export function FileField({ name, label, accept, problem, idPrefix = 'field' }: { name: string; label: string; accept: string; problem?: FormProblem | null; idPrefix?: string }) {
  const { id, invalid, error } = fieldState(idPrefix, name, problem);
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} name={name} type="file" accept={accept} {...invalid} />
      {error}
    </div>
  );
}

/** A labelled checkbox: posted as `on` when ticked, absent otherwise. */
export function Checkbox({ name, label, checked, idPrefix = 'field' }: { name: string; label: string; checked: boolean; idPrefix?: string }) {
  const id = `${idPrefix}-${name}`;
  return (
    <div class="field check">
      <input id={id} name={name} type="checkbox" checked={checked} />
      <label for={id}>{label}</label>
    </div>
  );
}

/** A search form (GET): input and button both named "Search". */
export function SearchForm({ action, value, hint }: { action: string; value?: string; hint: string }) {
  return (
    <form method="get" action={action} class="search" role="search">
      <div class="field">
        <label for="search-q">Search</label>
        <input id="search-q" name="q" type="search" value={value} maxlength={254} aria-describedby="search-hint" />
      </div>
      <button type="submit">Search</button>
      <p class="muted" id="search-hint">
        {hint}
      </p>
    </form>
  );
}

/**
 * A held buyer's banner (the account is on hold after a reversed payment, or by the shop): what it stops, and the
 * shop's contact (SUPPORT_EMAIL) when it gives one.
 */
export function HoldBanner({ supportEmail }: { supportEmail: string | null }) {
  return (
    <div class="alert" role="status">
      <strong>Your account is on hold.</strong>
      {' Deposits and purchases are paused until the shop has looked at it; you can still sign in, see your orders and use your items. '}
      {supportEmail ? (
        <>
          {'Contact the shop at '}
          <a href={`mailto:${supportEmail}`}>{supportEmail}</a>.
        </>
      ) : (
        'Contact the shop.'
      )}
    </div>
  );
}

/** When an order's replacement warranty ends (the warranty is the order's: its product's when it was bought). */
export function WarrantyEnds({ order }: { order: { createdAt: string; warrantyHours: number; status: string } }) {
  if (order.status === 'cancelled') return null;
  if (order.warrantyHours === 0) return <p class="muted">No replacement warranty.</p>;
  const ends = new Date(Date.parse(order.createdAt) + order.warrantyHours * 3_600_000).toISOString();
  const over = Date.parse(ends) <= Date.now();
  return (
    <p>
      {`Replacement warranty: ${order.warrantyHours} hours, ${over ? 'ended' : 'until'} `}
      <When iso={ends} />
    </p>
  );
}
