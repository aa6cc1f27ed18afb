import type { Context } from 'hono';
import type { Child } from 'hono/jsx';
import type { AppEnv } from '../../env';
import { IdempotencyKey } from '../components';
import { page, type LayoutProps } from '../layout';

// Confirmation before a console action that moves money or access. The pattern, for any action posted to ACTION:
//   - the page's button is a GET form to `confirmPath(ACTION)` (<AskFirst>), carrying the action's inputs if any;
//   - `GET confirmPath(ACTION)` reads what the action will touch (in its one page batch) and answers
//     `confirmationPage(...)`: the exact effect in words (amount, whose account), "Confirm" (a POST to ACTION with the
//     inputs as hidden fields and a fresh idempotency_key, so a double click acts once) and "Back" (a link: nothing
//     happens);
//   - `POST ACTION` acts, as before.
// Showing the confirmation changes nothing; only the post does.

export const confirmPath = (action: string) => `${action}/confirm`;

interface AskFirstProps {
  action: string;
  label: string;
  /** Inputs the confirmation page needs (sent in its URL: never a secret). */
  fields?: Record<string, string>;
  class?: string;
  describedBy?: string;
}

/** The button that opens the action's confirmation page. */
export const AskFirst = ({ action, label, fields = {}, class: className = 'secondary', describedBy }: AskFirstProps) => (
  <form method="get" action={confirmPath(action)} class="inline">
    {Object.entries(fields).map(([name, value]) => (
      <input type="hidden" name={name} value={value} />
    ))}
    <button type="submit" class={className} aria-describedby={describedBy}>
      {label}
    </button>
  </form>
);

export interface Confirmation {
  /** The page's heading: the action as a question ("Mark deposit #5 paid?"). */
  title: string;
  /** The console section the page belongs to (its nav entry). */
  section: LayoutProps['section'];
  /** What Confirm will do, exactly: amounts and whose account. */
  effect: Child;
  /** Where Confirm posts (the action's own URL). */
  action: string;
  /** The action's inputs, posted again as hidden fields. */
  fields?: Record<string, string>;
  /** Where Back goes: the page the operator came from. */
  back: string;
  /** The action takes something away (a debit, a disabled account): Confirm is drawn as a danger button. */
  danger?: boolean;
}

/** The confirmation page of an action (see the pattern above). */
export function confirmationPage(c: Context<AppEnv>, { title, section, effect, action, fields = {}, back, danger = false }: Confirmation) {
  return page(c, {
    title,
    section,
    children: (
      <section class="card narrow confirm" aria-labelledby="confirm-effect">
        <p id="confirm-effect">{effect}</p>
        <form method="post" action={action} class="row">
          {Object.entries(fields).map(([name, value]) => (
            <input type="hidden" name={name} value={value} />
          ))}
          <IdempotencyKey />
          <button type="submit" class={danger ? 'danger' : undefined}>
            Confirm
          </button>
          <a href={back} class="button secondary">
            Back
          </a>
        </form>
      </section>
    ),
  });
}
