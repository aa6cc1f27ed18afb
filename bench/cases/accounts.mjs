// The account's routes: the authenticated balance read (the auth path) and the dashboard's sign-in form.
import { measure } from '../measure.mjs';
import { API } from '../options.mjs';

export async function walletBalanceCase(b) {
  const { get, byUser } = b.requests;
  // Its ceiling is the keyed read (what a keyed request must do at least); the bare read brackets it too, for reference.
  const keyed = async () => byUser('GET', '/keyed-read');
  await b.runCeiling('keyed_read', 'before', keyed);
  await b.bracketed(['d1_read', get('/d1-read')], 'wallet_balance', () => measure('GET /wallet/balance', b.apiBase, byUser('GET', `${API}/wallet/balance`)));
  await b.runCeiling('keyed_read', 'after', keyed);
}

export async function signInCase(b) {
  await b.runCase('sign_in', () => measure('POST /dashboard/sign-in (303)', b.apiBase, b.requests.signInRequests(), { expectedStatus: 303 }));
}
