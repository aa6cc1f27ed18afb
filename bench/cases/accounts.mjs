// The account's routes: the authenticated balance read (the auth path) and the dashboard's sign-in form.
import { measure } from '../measure.mjs';
import { API } from '../options.mjs';

export async function walletBalanceCase(b) {
  const { get, byUser } = b.requests;
  await b.bracketed(['d1_read', get('/d1-read')], 'wallet_balance', () => measure('GET /wallet/balance', b.apiBase, byUser('GET', `${API}/wallet/balance`)));
}

export async function signInCase(b) {
  await b.runCase('sign_in', () => measure('POST /dashboard/sign-in (303)', b.apiBase, b.requests.signInRequests(), { expectedStatus: 303 }));
}
