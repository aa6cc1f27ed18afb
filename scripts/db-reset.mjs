// `npm run db:reset`: throws away the local database of `npm run dev` (or DEV_STATE_DIR's) and makes a fresh one:
// migrations applied, demo data seeded, a new demo API key printed. Stop `npm run dev` first: a running server keeps
// the deleted database open and would go on serving it until restarted.
import { assertNodeVersion } from './wrangler.mjs';
import { deleteLocalDatabase, demoWallet, prepareLocalDatabase } from './local-db.mjs';
import { localPaymentBaseUrl } from './payment-base-url.mjs';
import { DEMO_USER } from './seed.mjs';

assertNodeVersion();
console.log(`Deleted the local database (${deleteLocalDatabase()}).`);
// The seeded deposits' payment links name the port the next `npm run dev` will use (PORT, as for it).
const { apiKey: demoKey, demoBalanceCents } = prepareLocalDatabase({ paymentBaseUrl: localPaymentBaseUrl(process.env.PORT ?? '8787', []).url });
console.log(`
  Fresh local database.
  Demo user:     ${DEMO_USER.email} / ${DEMO_USER.password} (${demoWallet(demoBalanceCents)})
  Demo API key:  ${demoKey}
  Start the server with: npm run dev
`);
